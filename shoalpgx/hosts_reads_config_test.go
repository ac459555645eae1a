package shoalpgx

import (
	"context"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// The read pool keeps no connections open of its own accord (MinConns and
// MinIdleConns 0, whatever the pool's), takes ReadMaxConns as its MaxConns
// and ReadObserver as its Observer, and stands outside the pool's Budget:
// with every connection of the budget held by the pool, a read still gets
// one. The test server is a primary, which the read pool falls back to.
func TestReadsOwnSettings(t *testing.T) {
	budget, err := shoal.NewBudget(2, shoal.BudgetName("writes"))
	if err != nil {
		t.Fatal(err)
	}
	reads := &pgxObserver{}
	cfg := testConfig(t, func(c *Config) {
		c.MaxConns, c.MinConns, c.MinIdleConns = 2, 2, 1
		c.ReadMaxConns, c.ReadObserver = 3, reads
		c.Budget = budget
	})
	p := newPoolFor(t, cfg)
	rc := p.Reads().p.config
	if rc.MaxConns != 3 || rc.MinConns != 0 || rc.MinIdleConns != 0 || rc.Budget != nil {
		t.Fatalf("the read pool's MaxConns %d, MinConns %d, MinIdleConns %d, a Budget %t; want 3, 0, 0, none",
			rc.MaxConns, rc.MinConns, rc.MinIdleConns, rc.Budget != nil)
	}

	ctx, cancel := context.WithTimeout(pgtest.Ctx(t), 10*time.Second)
	defer cancel()
	for range 2 {
		c, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
	}
	c, err := p.Reads().Acquire(ctx)
	if err != nil {
		t.Fatalf("a read with the budget's 2 connections held by the pool: %v", err)
	}
	c.Release()
	if n := reads.acquires.Load(); n != 1 {
		t.Errorf("the ReadObserver saw %d acquires, want the read's 1", n)
	}
}
