package core

import (
	"syscall"
	"time"
)

// rusageThread is Linux's RUSAGE_THREAD: the calling thread only.
const rusageThread = 1

// threadCPU returns the CPU time (user and system) the calling OS thread
// has used. Time the thread spent descheduled while other processes ran is
// not in it, which is what makes it steadier than wall time on a shared
// machine.
func threadCPU() (time.Duration, bool) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(rusageThread, &ru); err != nil {
		return 0, false
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano()), true
}
