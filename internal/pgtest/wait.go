package pgtest

import (
	"context"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
)

// Ctx is a context that bounds one step of a test, so that a hang shows as
// a failure instead of a stuck test run.
func Ctx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// WaitFor polls cond every few milliseconds, failing the test if it is
// still false after limit: a guard against hangs, not a timing assertion.
// It returns how long cond took to hold.
func WaitFor(t testing.TB, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	start := time.Now()
	for !cond() {
		if time.Since(start) > limit {
			t.Fatalf("still waiting after %s for %s", limit, what)
		}
		time.Sleep(2 * time.Millisecond)
	}
	return time.Since(start)
}

// Settle waits until no close the pool started is still running: the core
// closes connections on goroutines of their own, after the Release or
// Discard that let them go has returned. stats is the pool's statistics
// (func() shoal.Stats { return pool.Stat().Shoal() } for shoalpgx).
func Settle(t testing.TB, stats func() shoal.Stats) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for stats().Closing != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("closes still running after 10s: %v", stats())
		}
		time.Sleep(time.Millisecond)
	}
}
