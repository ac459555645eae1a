package shoalpgx

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal"
)

// Close gives up when its context ends while a tenant's connection is
// still acquired: it returns at the deadline with ctx's error and a
// *shoal.CloseError naming the pool and the lease held, the group stays
// closed, and the connection closes once it is released.
func TestGroupCloseReturnsWhenCtxEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakePG(t)
		g, err := NewGroup(GroupConfig{
			Name:   "tenants",
			Config: func(string) (*Config, error) { return f.config(t, nil), nil },
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx := context.Background()
		c, err := g.Acquire(ctx, "acme")
		if err != nil {
			t.Fatal(err)
		}
		pgc := c.Conn().PgConn()

		closeCtx, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		start := time.Now()
		err = g.Close(closeCtx)
		if took := time.Since(start); took != time.Second {
			t.Errorf("Close returned after %s, want 1s: its context's deadline", took)
		}
		var ce *shoal.CloseError
		if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &ce) {
			t.Fatalf("Close with a lease held past its context: %v, want a *shoal.CloseError wrapping context.DeadlineExceeded", err)
		}
		if ce.Held != 1 || ce.Pool != "tenants[1]" {
			t.Errorf("CloseError: pool %q, %d held; want pool \"tenants[1]\", 1 held", ce.Pool, ce.Held)
		}
		if _, err := g.Exec(ctx, "acme", "select"); !errors.Is(err, shoal.ErrClosed) {
			t.Errorf("Exec after Close gave up: %v, want shoal.ErrClosed", err)
		}

		c.Release()
		synctest.Wait()
		if !pgc.IsClosed() {
			t.Error("the connection released after Close gave up is still open")
		}
	})
}
