package etcdtest

import "syscall"

// childAttr makes the kernel kill a member if the test binary dies before
// its cleanups run (a panic in another goroutine, go test's -timeout), so a
// crashed test leaves no etcd behind.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
