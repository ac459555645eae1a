// Package ctxwait holds the one wait the adapters share: a sleep that a
// context cuts short.
package ctxwait

import (
	"context"
	"time"
)

// Sleep waits d, and reports false if ctx ended first.
func Sleep(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}
