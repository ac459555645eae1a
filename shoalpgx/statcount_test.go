package shoalpgx

import (
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// TestStatCountsANewConnectionOnce: right after the first Acquire, which a
// dial served, pgxpool's TotalConns reads 1 with MaxConns 1. The core used
// to count the new connection as dialling until after the waiter had it.
func TestStatCountsANewConnectionOnce(t *testing.T) {
	ctx := pgtest.Ctx(t)
	for i := range 30 {
		p := newTestPool(t, func(c *Config) { c.MaxConns = 1 })
		c, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		s := p.Stat()
		if s.TotalConns() != 1 || s.AcquiredConns() != 1 || s.ConstructingConns() != 0 {
			t.Fatalf("try %d: TotalConns %d, AcquiredConns %d, ConstructingConns %d; want 1, 1, 0",
				i, s.TotalConns(), s.AcquiredConns(), s.ConstructingConns())
		}
		c.Release()
		p.Close()
	}
}

// TestStatCountsAnIdleCloseOnceItsConnectionIsGone: a Stat whose
// TotalConns no longer counts a connection closed for MaxConnIdleTime
// counts it in MaxIdleDestroyCount, as pgxpool's does (its suite's
// TestPoolBackgroundChecksMaxConnIdleTime). The count used to be made by
// the close's own goroutine, after the connection had left the count of
// open ones: a poll that caught the moment between failed, 8 times in 20
// on a loaded machine, and in each of three runs of this test's tight poll.
func TestStatCountsAnIdleCloseOnceItsConnectionIsGone(t *testing.T) {
	ctx := pgtest.Ctx(t)
	for i := range 20 {
		p := newTestPool(t, func(c *Config) {
			c.MaxConns = 1
			c.MaxConnIdleTime = 20 * time.Millisecond
			c.HealthCheckPeriod = 10 * time.Millisecond
		})
		if _, err := p.Exec(ctx, "select 1"); err != nil {
			t.Fatal(err)
		}
		deadline := time.Now().Add(5 * time.Second)
		s := p.Stat()
		for s.TotalConns() != 0 && time.Now().Before(deadline) {
			s = p.Stat() // polled as fast as it goes: the moment is short
		}
		if s.TotalConns() != 0 || s.MaxIdleDestroyCount() != 1 {
			t.Fatalf("try %d: TotalConns %d, MaxIdleDestroyCount %d; want 0 and 1 (%v)", i, s.TotalConns(), s.MaxIdleDestroyCount(), s.Shoal())
		}
		p.Close()
	}
}
