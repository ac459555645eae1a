package shoalpgx

import (
	"syscall"
	"time"
)

// threadCPU returns the CPU time (user and system) the calling OS thread
// has used: steadier than wall time on a shared machine, since time spent
// descheduled while other processes ran is not in it.
func threadCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(1 /* RUSAGE_THREAD */, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
