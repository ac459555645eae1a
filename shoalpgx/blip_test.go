package shoalpgx

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// TestOneRefusedDialFailsNoCallerWithTime: a pool that was connected, whose
// next dial is refused (a server restarting, a failover's promotion), serves
// every caller whose deadline covers the next try, instead of failing them
// all with that one stale error until the backoff has passed.
func TestOneRefusedDialFailsNoCallerWithTime(t *testing.T) {
	var dials atomic.Int32
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 4
		c.BeforeConnect = func(context.Context, *pgx.ConnConfig) error {
			if dials.Add(1) == 2 {
				return syscall.ECONNREFUSED
			}
			return nil
		}
	})
	if _, err := p.Exec(pgtest.Ctx(t), "select 1"); err != nil {
		t.Fatal(err)
	}
	p.Reset() // the connection is gone; the next dial is refused
	const callers = 16
	var wg sync.WaitGroup
	var failed atomic.Int32
	for range callers {
		wg.Go(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if _, err := p.Exec(ctx, "select 1"); err != nil {
				failed.Add(1)
				t.Errorf("a caller with 10s failed after one refused dial: %v", err)
			}
		})
	}
	wg.Wait()
	if s := p.Stat().Shoal(); s.DialErrors != 1 {
		t.Fatalf("%d dial errors, want the one refused", s.DialErrors)
	}
}

// TestServerDownFailsCallersFast: a server that refuses every dial for a
// second counts as down, and from then callers get the dial's error at
// once, not at their deadlines.
func TestServerDownFailsCallersFast(t *testing.T) {
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 2
		c.BeforeConnect = func(context.Context, *pgx.ConnConfig) error { return syscall.ECONNREFUSED }
	})
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	for i := range 20 {
		start := time.Now()
		_, err := p.Exec(ctx, "select 1")
		if !errors.Is(err, syscall.ECONNREFUSED) {
			t.Fatalf("call %d: %v, want the refused dial's error", i, err)
		}
		if ctx.Err() != nil {
			t.Fatalf("call %d sat until its deadline (%s)", i, time.Since(start))
		}
	}
}
