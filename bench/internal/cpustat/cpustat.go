// Package cpustat reads the whole machine's CPU times from /proc/stat, for
// the benchmarks' share of the machine left idle during a run.
package cpustat

import (
	"errors"
	"fmt"
	"os"
	"strconv"
	"strings"
)

// Ticks are the machine's CPU times from the first line of /proc/stat,
// summed over all CPUs, in clock ticks.
type Ticks struct {
	Busy, Idle int64 // Idle includes iowait; Busy is everything else but guest time
}

// Read reads /proc/stat. On a system without it, it returns an
// error and the benchmark reports no idle share.
func Read() (Ticks, error) {
	b, err := os.ReadFile("/proc/stat")
	if err != nil {
		return Ticks{}, err
	}
	return Parse(string(b))
}

// Parse reads the aggregate "cpu" line: user nice system idle
// iowait irq softirq steal guest guest_nice. Guest time is already counted
// in user and nice, so it is left out. Steal (time the hypervisor gave to
// another guest) counts as busy: the machine could not run us then.
func Parse(stat string) (Ticks, error) {
	line, _, _ := strings.Cut(stat, "\n")
	f := strings.Fields(line)
	if len(f) < 5 || f[0] != "cpu" {
		return Ticks{}, errors.New("/proc/stat: no aggregate cpu line")
	}
	var t Ticks
	for i, s := range f[1:] {
		v, err := strconv.ParseInt(s, 10, 64)
		if err != nil {
			return Ticks{}, fmt.Errorf("/proc/stat: field %d of the cpu line: %w", i+1, err)
		}
		switch i {
		case 3, 4: // idle, iowait
			t.Idle += v
		case 8, 9: // guest, guest_nice
		default:
			t.Busy += v
		}
	}
	return t, nil
}

// IdleShare is the fraction of the machine's CPU time between a and b that
// was idle, or -1 when nothing was counted.
func IdleShare(a, b Ticks) float64 {
	busy, idle := b.Busy-a.Busy, b.Idle-a.Idle
	if busy+idle <= 0 {
		return -1
	}
	return float64(idle) / float64(busy+idle)
}

// Interval is a span of the machine's CPU time that started at Start.
type Interval struct {
	start Ticks
	err   error
}

// Start begins an interval now.
func Start() Interval {
	t, err := Read()
	return Interval{start: t, err: err}
}

// IdleShare is the fraction of the machine's CPU time since Start that was
// idle, or -1 when /proc/stat could not be read at either end or nothing
// was counted.
func (iv Interval) IdleShare() float64 {
	end, err := Read()
	if iv.err != nil || err != nil {
		return -1
	}
	return IdleShare(iv.start, end)
}
