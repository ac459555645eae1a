//go:build !linux

package main

import "syscall"

// childAttr is empty where there is no parent-death signal: a worker then
// ends when it sees its stdin close.
func childAttr() *syscall.SysProcAttr { return nil }
