package observewrap_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/observewrap"
)

// A pool given a wrapper finds in it what it would find in the wrapped
// Observer: it attaches its Stats and holders, and detaches them once
// closed; it traces a wait and names each lease's taker only when the
// wrapped Observer traces.
func TestPoolFindsWhatTheWrappedObserverOffers(t *testing.T) {
	for _, tracing := range []bool{true, false} {
		synctest.Test(t, func(t *testing.T) {
			o := &switchedTracer{on: tracing}
			p, err := shoal.New(shoal.Config[int]{
				Dial:     func(context.Context) (int, error) { return 1, nil },
				MaxConns: 1,
				Observer: observewrap.Wrap(o, observewrap.Options{}),
			})
			if err != nil {
				t.Fatal(err)
			}
			held, err := p.Acquire(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			before := len(o.traced()) // the first acquire waited for its dial
			ctx, cancel := context.WithTimeout(context.Background(), time.Second)
			defer cancel()
			if _, err := p.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
				t.Fatalf("tracing %v: acquire on a full pool: %v", tracing, err)
			}
			stats, holders := o.attached()
			switch {
			case stats == nil || stats().Leases != 1:
				t.Errorf("tracing %v: the pool's Stats not attached", tracing)
			case holders == nil || len(holders()) != 1:
				t.Errorf("tracing %v: the pool's holders not attached", tracing)
			case (holders()[0].AcquiredBy != "") != tracing:
				t.Errorf("tracing %v: the holder's taker is %q", tracing, holders()[0].AcquiredBy)
			}
			if waits := o.traced(); len(waits) != before+1 && tracing {
				t.Errorf("tracing: %d waits traced for the one timed out", len(waits)-before)
			} else if len(waits) != 0 && !tracing {
				t.Errorf("tracing off: %d waits traced", len(waits))
			}
			held.Release()
			if err := p.Close(context.Background()); err != nil {
				t.Fatal(err)
			}
			o.mu.Lock()
			defer o.mu.Unlock()
			if o.detached != 2 {
				t.Errorf("tracing %v: detached %d times after Close, want 2", tracing, o.detached)
			}
		})
	}
}
