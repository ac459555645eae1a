package shoalpgx

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// Close refuses the pool's new acquires at once, as its doc says, also
// while it waits for a read connection still held: the read pool's
// leases are not the pool's, and the pool must not go on handing out
// connections that Close will then wait for too.
func TestCloseRefusesAcquiresWhileReadsDrain(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 2 })
	ctx := pgtest.Ctx(t)
	rc, err := p.Reads().Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	closed := make(chan struct{})
	go func() { p.Close(); close(closed) }()
	pgtest.WaitFor(t, 5*time.Second, "the read pool closed", func() bool {
		actx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		c, err := p.Reads().Acquire(actx)
		if err == nil {
			c.Release()
		}
		return errors.Is(err, shoal.ErrClosed)
	})
	actx, cancel := context.WithTimeout(ctx, time.Second)
	c, err := p.Acquire(actx)
	cancel()
	if err == nil {
		c.Release()
	}
	rc.Release()
	<-closed
	if !errors.Is(err, shoal.ErrClosed) {
		t.Fatalf("Acquire on a pool whose Close is under way: %v, want shoal.ErrClosed", err)
	}
}
