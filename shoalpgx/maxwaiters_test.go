package shoalpgx

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// pool_max_waiters bounds the callers waiting for a connection: past it
// an Acquire fails at once with an error that matches shoal.ErrExhausted
// (docs/settings.md, MaxWaiters), counted as rejected.
func TestMaxWaitersRefusesAtOnce(t *testing.T) {
	parse := func(s string) (*Config, error) { return ParseConfig(s + "&pool_max_conns=1&pool_max_waiters=1") }
	p := pgtest.Open(t, NewWithConfig, pgtest.Config(t, parse, nil))
	ctx, cancel := context.WithTimeout(pgtest.Ctx(t), 30*time.Second)
	defer cancel()
	held, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	waiterCtx, endWaiter := context.WithCancel(ctx)
	waited := make(chan error, 1)
	go func() {
		c, err := p.Acquire(waiterCtx)
		if err == nil {
			c.Release()
		}
		waited <- err
	}()
	pgtest.WaitFor(t, 10*time.Second, "a caller waiting", func() bool { return p.Stat().Shoal().Waiting == 1 })

	// Its own deadline, short: a pool that let it wait would fail it with
	// the deadline's error, not ErrExhausted.
	short, cancelShort := context.WithTimeout(ctx, 5*time.Second)
	defer cancelShort()
	if _, err := p.Acquire(short); !errors.Is(err, shoal.ErrExhausted) {
		t.Fatalf("an Acquire past pool_max_waiters=1: %v, want an error matching shoal.ErrExhausted", err)
	}
	if s := p.Stat().Shoal(); s.RejectedAcquires != 1 {
		t.Errorf("RejectedAcquires %d after the refusal, want 1", s.RejectedAcquires)
	}
	endWaiter()
	if err := <-waited; !errors.Is(err, context.Canceled) {
		t.Errorf("the waiter: %v, want its context's end", err)
	}
}
