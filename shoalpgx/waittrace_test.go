package shoalpgx

import (
	"context"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
	"github.com/shoalpool/shoal/internal/waitrec"
)

type callerKey struct{}

// An acquire that waits for a connection is traced with the caller's own
// context, so shoalotel's wait span lands under the caller's span.
func TestWaitTracedWithTheCallersContext(t *testing.T) {
	rec := &waitrec.Recorder{}
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 1
		c.Observer = rec
	})
	ctx := pgtest.Ctx(t)
	held, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(30*time.Millisecond, held.Release)
	c, err := p.Acquire(context.WithValue(ctx, callerKey{}, "second"))
	if err != nil {
		t.Fatal(err)
	}
	c.Release()
	if calls := rec.Carrying(callerKey{}, "second"); len(calls) != 1 || calls[0].Err != nil {
		t.Fatalf("waits traced with the second acquire's context: %+v; want one that succeeded", calls)
	}
}
