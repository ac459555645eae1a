package benchrun

import (
	"bufio"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
)

// ThisMachine describes the machine the process runs on. Fields it cannot
// learn say "unknown".
func ThisMachine() Machine {
	return Machine{
		OS:        runtime.GOOS,
		Arch:      runtime.GOARCH,
		CPU:       cpuModel(),
		Cores:     runtime.NumCPU(),
		Memory:    memTotal(),
		GoVersion: "Go " + strings.TrimPrefix(runtime.Version(), "go"),
	}
}

// procField returns the value of the first "key: value" line of a /proc
// file whose key is key.
func procField(path, key string) (string, bool) {
	f, err := os.Open(path)
	if err != nil {
		return "", false
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if ok && strings.TrimSpace(k) == key {
			return strings.TrimSpace(v), true
		}
	}
	return "", false
}

func cpuModel() string {
	if v, ok := procField("/proc/cpuinfo", "model name"); ok {
		return v
	}
	return "unknown"
}

func memTotal() string {
	v, ok := procField("/proc/meminfo", "MemTotal")
	if !ok {
		return "unknown"
	}
	kb, err := strconv.ParseFloat(strings.TrimSuffix(v, " kB"), 64)
	if err != nil {
		return "unknown"
	}
	return fmt.Sprintf("%.1f GB", kb/1024/1024)
}
