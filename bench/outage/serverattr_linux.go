package main

import "syscall"

// serverAttr runs the throwaway server as cred (nil: as this process), and
// has the kernel shut it down (SIGQUIT, an immediate shutdown) if this
// process dies first, however it dies, so that no server outlives the run.
func serverAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred, Pdeathsig: syscall.SIGQUIT}
}
