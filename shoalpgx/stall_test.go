package shoalpgx

import (
	"context"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// TestStalledNetworkNeverHoldsACallerPastItsDeadline: when the network
// under the pool's connections stops moving bytes, a query fails
// CancelTimeout after its deadline at the latest (the pool waits that long
// for the server to answer the cancel request), and so does its caller.
// pgx then closes the connection, and closing waits for the server (a
// Terminate, a cancel request); that close runs in the background, never
// on the caller's goroutine. The bound below is a hang check, not a speed
// claim: before the fix callers came back up to 5s (the close timeout)
// late.
func TestStalledNetworkNeverHoldsACallerPastItsDeadline(t *testing.T) {
	const (
		workers  = 32
		deadline = 300 * time.Millisecond
		slack    = time.Second + defaultCancelTimeout
		stall    = 3 * time.Second
	)
	cfg, px := proxiedConfig(t, func(c *Config) { c.MaxConns = 8 })
	p := newPoolFor(t, cfg) // closed before the proxy stops (cleanups run in reverse)

	var worst atomic.Int64
	var calls, failed atomic.Int64
	stop := time.Now().Add(stall + 2*time.Second)
	var wg sync.WaitGroup
	for range workers {
		wg.Go(func() {
			for i := 0; i < 10000 && time.Now().Before(stop); i++ {
				ctx, cancel := context.WithTimeout(context.Background(), deadline)
				start := time.Now()
				var n int
				if err := p.QueryRow(ctx, "select 1").Scan(&n); err != nil {
					failed.Add(1)
				}
				took := int64(time.Since(start))
				cancel()
				calls.Add(1)
				for {
					w := worst.Load()
					if took <= w || worst.CompareAndSwap(w, took) {
						break
					}
				}
			}
		})
	}
	time.Sleep(500 * time.Millisecond)
	px.Hold()
	time.Sleep(stall)
	px.Release()
	wg.Wait()
	t.Logf("%d calls, %d failed; the slowest returned after %s (deadline %s)", calls.Load(), failed.Load(), time.Duration(worst.Load()), deadline)
	if failed.Load() == 0 {
		t.Fatal("no call failed: the stall did not reach the pool's connections")
	}
	if w := time.Duration(worst.Load()); w > deadline+slack {
		t.Fatalf("a call returned %s after it began, past its %s deadline by %s", w, deadline, w-deadline)
	}
	ctx := pgtest.Ctx(t)
	if err := p.Ping(ctx); err != nil {
		t.Fatalf("the pool did not recover after the stall: %v", err)
	}
}
