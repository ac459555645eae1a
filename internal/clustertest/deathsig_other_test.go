//go:build unix && !linux

package clustertest

import "syscall"

// childAttr is empty where the kernel has no parent-death signal: there a
// worker outlives a test binary that crashes before its cleanups run, until
// it sees its stdin close.
func childAttr() *syscall.SysProcAttr { return nil }
