package shoal

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestIdleForInHealthCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var (
			mu   sync.Mutex
			seen []time.Duration
		)
		p, _ := newTestPool(t, Config[*fakeConn]{
			MaxConns: 1, HealthCheckAfter: 20 * time.Millisecond,
			HealthCheck: func(ctx context.Context, _ *fakeConn) error {
				idle, ok := IdleFor(ctx)
				if !ok {
					t.Error("IdleFor: no idleness in HealthCheck's context")
				}
				mu.Lock()
				seen = append(seen, idle)
				mu.Unlock()
				return nil
			},
		})
		mustAcquire(t, p).Release()
		const slept = 60 * time.Millisecond
		time.Sleep(slept)
		mustAcquire(t, p).Release()
		mu.Lock()
		defer mu.Unlock()
		if len(seen) != 1 {
			t.Fatalf("HealthCheck ran %d times, want once", len(seen))
		}
		if seen[0] != slept {
			t.Errorf("IdleFor = %v after sleeping %v idle, want exactly that on the fake clock", seen[0], slept)
		}
		if _, ok := IdleFor(context.Background()); ok {
			t.Error("IdleFor reports idleness outside a health check")
		}
	})
}
