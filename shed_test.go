package shoal

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

func TestLoadSheddingDropsLongWaitersWhenOverloaded(t *testing.T) {
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, QueueTarget: 5 * time.Millisecond, QueueInterval: 20 * time.Millisecond})
	held := mustAcquire(t, p)
	const n = 4
	errs := make(chan error, n)
	for i := 0; i < n; i++ {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			l, err := p.Acquire(ctx)
			if err == nil {
				l.Release()
			}
			errs <- err
		}()
	}
	for i := 0; i < n; i++ {
		select {
		case err := <-errs:
			if !errors.Is(err, ErrExhausted) || !strings.Contains(err.Error(), "load shedding") {
				t.Fatalf("waiter got %v, want ErrExhausted from load shedding", err)
			}
		case <-time.After(30 * time.Second):
			t.Fatal("overloaded pool kept its waiters")
		}
	}
	if s := p.Stats(); s.RejectedAcquires != n {
		t.Fatalf("RejectedAcquires = %d, want %d", s.RejectedAcquires, n)
	}
	held.Release()
	// Quick acquires switch shedding off again once an interval passes.
	eventually(t, "shedding off", func() bool {
		l := mustAcquire(t, p)
		l.Release()
		return !p.shed.shedding.Load()
	})
}
