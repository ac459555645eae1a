package clustertest

import "syscall"

// childAttr has the kernel kill a worker if the test binary dies before its
// cleanups run (a panic elsewhere, go test's -timeout).
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
