package shoalpgx

import (
	"testing"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// An acquire and release of an idle connection allocates nothing when no
// ping is due and no hook is set: the ping's goroutine and contexts, and
// ShouldPing's measure of idleness, cost only where they are asked for.
func TestAcquireReleaseAllocatesNothing(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 1 })
	ctx := pgtest.Ctx(t)
	warmPID(t, p)
	cycle := func() {
		c, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		c.Release()
	}
	// The Conn wrappers come in blocks, one allocation per block: far below
	// one per run.
	if n := testing.AllocsPerRun(1000, cycle); n != 0 {
		t.Fatalf("%v allocations per acquire and release, want 0", n)
	}
}
