package main

import "syscall"

// childAttr has the kernel kill a worker when the runner dies, however it
// dies, so that no worker outlives a crashed or killed run.
func childAttr() *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
}
