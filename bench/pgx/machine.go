package main

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// cpuTicks are the machine's CPU times from the first line of /proc/stat,
// summed over all CPUs, in clock ticks.
type cpuTicks struct {
	busy, idle int64 // idle includes iowait; busy is everything else but guest time
}

// readCPUTicks reads /proc/stat. On a system without it, it returns an
// error and the benchmark reports no idle share.
func readCPUTicks() (cpuTicks, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return cpuTicks{}, err
	}
	return parseCPUTicks(string(b))
}

// parseCPUTicks reads the aggregate "cpu" line: user nice system idle
// iowait irq softirq steal guest guest_nice. Guest time is already counted
// in user and nice, so it is left out. Steal (time the hypervisor gave to
// another guest) counts as busy: the machine could not run us then.
func parseCPUTicks(stat string) (cpuTicks, error) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return cpuTicks{}, errors.New("/proc/stat: no aggregate cpu line")
	}
	var t cpuTicks
	for i, s := range f[1:] {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return cpuTicks{}, fmt.Errorf("/proc/stat: field %d of the cpu line: %w", i+1, err)
		}
		switch i {
		case 3, 4: // idle, iowait
			t.idle += v
		case 8, 9: // guest, guest_nice
		default:
			t.busy += v
		}
	}
	return t, nil
}

// idleShare is the fraction of the machine's CPU time between a and b that
// was idle, or -1 when nothing was counted.
func idleShare(a, b cpuTicks) float64 {
	busy, idle := b.busy-a.busy, b.idle-a.idle
	if busy+idle <= 0 {
		return -1
	}
	return float64(idle) / float64(busy+idle)
}
