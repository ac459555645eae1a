package pgpair

import (
	"os/exec"
	"syscall"
)

// ownGroup runs cmd in a process group of its own and makes its
// cancellation kill the whole group: pair.sh runs pg_rewind, pg_basebackup
// and pg_ctl, which killing bash alone would leave running on the data
// directory the next rebuild works on.
func ownGroup(cmd *exec.Cmd) {
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return syscall.Kill(-cmd.Process.Pid, syscall.SIGKILL) }
}
