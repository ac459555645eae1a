package shoalpgx

import (
	"testing"

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
