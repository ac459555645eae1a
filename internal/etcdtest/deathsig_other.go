//go:build !linux

package etcdtest

import "syscall"

// childAttr is empty where the kernel has no parent-death signal: there a
// member outlives a test binary that crashes before its cleanups run.
func childAttr() *syscall.SysProcAttr { return nil }
