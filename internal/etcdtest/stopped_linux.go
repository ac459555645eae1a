package etcdtest

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"time"
)

// waitStopped waits (up to a second) until every thread of pid is stopped.
// SIGSTOP is delivered to each thread as it next leaves the kernel, so a
// request etcd had begun to read could still be answered just after kill
// returned; a test that then expects silence must wait for the stop.
func waitStopped(pid int) {
	deadline := time.Now().Add(time.Second)
	for !allStopped(pid) && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
}

// allStopped reports whether /proc shows every thread of pid stopped.
func allStopped(pid int) bool {
	stats, err := filepath.Glob(fmt.Sprintf("/proc/%d/task/*/stat", pid))
	if err != nil || len(stats) == 0 {
		return false
	}
	for _, path := range stats {
		b, err := os.ReadFile(path)
		if err != nil {
			return false
		}
		// The state follows the command name's closing parenthesis.
		i := strings.LastIndexByte(string(b), ')')
		if i < 0 || i+2 >= len(b) || (b[i+2] != 'T' && b[i+2] != 't') {
			return false
		}
	}
	return true
}
