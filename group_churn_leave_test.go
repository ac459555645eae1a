package shoal

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// The caller whose first use of a key evicted a pool leaves (its ctx
// ends) while the evicted pool's connection is still closing: the new
// pool goes on waiting for the evicted one's minimum, since another
// caller still waits for it within a ctx of its own, and that caller gets
// a connection rather than the budget's refusal.
func TestGroupEvictionWaitOutlivesTheCallerWhoStartedIt(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		g := slowCloseGroup(t, 1, 5*time.Second, GroupConfig[string, *fakeConn]{
			MaxPools:    1,
			IdleTimeout: -1,
		})
		ctx := context.Background()
		if err := g.Do(ctx, "a", func(*fakeConn) error { return nil }); err != nil {
			t.Fatal(err)
		}
		synctest.Wait() // a holds its minimum's connection

		hasty, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		first := make(chan error, 1)
		go func() { first <- g.Do(hasty, "b", func(*fakeConn) error { return nil }) }()
		synctest.Wait() // a is evicted, its connection closing
		patient := make(chan error, 1)
		go func() { patient <- g.Do(ctx, "b", func(*fakeConn) error { return nil }) }()

		if err := <-first; !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("the caller with 1s, while the evicted pool takes 5s to close: %v, want DeadlineExceeded", err)
		}
		if err := <-patient; err != nil {
			t.Fatalf("the caller with no deadline, once the evicted pool had closed: %v, want a connection", err)
		}
	})
}
