package main

import (
	"bytes"
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/etcdtest"
)

// TestBudgetThatCannotBeWrittenFails: `shoal budget` whose stdout takes no
// writes (a full disk) fails saying why, rather than ending with status 0,
// and --watch stops rather than reading etcd every --interval for output
// that goes nowhere, until Ctrl-C.
func TestBudgetThatCannotBeWrittenFails(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	prefix := fmt.Sprintf("/shoal-cmd-test/%d/", time.Now().UnixNano())
	budgetMember(t, addr, prefix, "orders-db", "api-1", 1)
	for _, watch := range []bool{false, true} {
		args := []string{"budget", "orders-db", "--etcd", addr, "--prefix", prefix, "--interval", "10ms"}
		if watch {
			args = append(args, "--watch")
		}
		// The bound only keeps a --watch that never stops from hanging the
		// test; it stops at its first print.
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		var stderr bytes.Buffer
		code := run(ctx, args, fullDisk{}, &stderr)
		cancel()
		if code != exitFailed || !strings.Contains(stderr.String(), "no space left on device") {
			t.Errorf("--watch %v: exit status %d, want %d, and the write's error on stderr:\n%s", watch, code, exitFailed, stderr.String())
		}
	}
}
