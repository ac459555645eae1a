package shoalpgx

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A dial whose AfterConnect panicked takes its connection out of its
// host's Open once: Hosts goes on counting the pool's connections, and
// never reports fewer than none.
func TestAfterConnectPanicCountsTheHostOnce(t *testing.T) {
	var panicked atomic.Bool
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 1
		c.AfterConnect = func(context.Context, *pgx.Conn) error {
			if panicked.CompareAndSwap(false, true) {
				panic("the hook broke")
			}
			return nil
		}
	})
	ctx := pgtest.Ctx(t)
	if err := p.Ping(ctx); err == nil {
		t.Fatal("Ping on the dial whose AfterConnect panicked: no error")
	}
	eventually(t, 10*time.Second, "a Ping served by the next dial", func() bool { return p.Ping(ctx) == nil })
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if hs := p.Hosts(); len(hs) != 1 || hs[0].Open != 1 {
		t.Fatalf("Hosts with one connection open: %+v, want Open 1", hs)
	}
}
