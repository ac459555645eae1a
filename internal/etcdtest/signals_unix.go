//go:build unix

package etcdtest

import "syscall"

// The signals that pause and resume a member.
var (
	sigStop = syscall.SIGSTOP
	sigCont = syscall.SIGCONT
)
