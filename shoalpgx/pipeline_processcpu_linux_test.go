package shoalpgx

import (
	"syscall"
	"time"
)

// processCPU returns the CPU time (user and system) the test process has
// used, on every thread: what a statement costs the client, its
// connection's reader and the scheduler's hand-offs included, and steadier
// than wall time on a shared machine, since time spent descheduled while
// other processes ran is not in it.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
