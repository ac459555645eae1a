//go:build !linux

package main

import "syscall"

// serverAttr runs the throwaway server as cred (nil: as this process).
// Outside Linux nothing stops it if this process dies first.
func serverAttr(cred *syscall.Credential) *syscall.SysProcAttr {
	return &syscall.SysProcAttr{Credential: cred}
}
