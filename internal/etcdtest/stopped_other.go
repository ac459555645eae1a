//go:build !linux

package etcdtest

// waitStopped has nothing to wait on where there is no /proc to read.
func waitStopped(int) {}
