package shoalpgx_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
	"github.com/shoalpool/shoal/shoalpgx"
)

// holdersTracer is an Observer that traces waits, as shoalotel's does, and
// keeps the Holders function the core pool attaches, as shoaldebug's page
// does.
type holdersTracer struct {
	shoal.BaseObserver
	mu      sync.Mutex
	holders func() []shoal.Holder
}

func (*holdersTracer) TraceWait(context.Context, time.Time, time.Duration, error) {}

func (o *holdersTracer) AttachHolders(h func() []shoal.Holder) func() {
	o.mu.Lock()
	defer o.mu.Unlock()
	o.holders = h
	return func() {}
}

func (o *holdersTracer) list() []shoal.Holder {
	o.mu.Lock()
	defer o.mu.Unlock()
	return o.holders()
}

// These stand for a program's code holding a connection of a shoalpgx pool.

//go:noinline
func holdWithAcquire(ctx context.Context, p *shoalpgx.Pool) (*shoalpgx.Conn, error) {
	return p.Acquire(ctx)
}

//go:noinline
func holdWithQuery(ctx context.Context, p *shoalpgx.Pool) (pgx.Rows, error) {
	return p.Query(ctx, "SELECT 1")
}

//go:noinline
func holdWithAcquireFunc(ctx context.Context, p *shoalpgx.Pool, o *holdersTracer) (holders []shoal.Holder, err error) {
	err = p.AcquireFunc(ctx, func(*shoalpgx.Conn) error {
		holders = o.list()
		return nil
	})
	return holders, err
}

// With tracing on, the holders of a shoalpgx pool and the message of an
// acquire that timed out on it name the program's code, past the adapter's
// own frames.
func TestTracingNamesTheTakerThroughShoalpgx(t *testing.T) {
	const pkg = "github.com/shoalpool/shoal/shoalpgx_test."
	obs := &holdersTracer{}
	p := pgtest.NewPool(t, shoalpgx.ParseConfig, shoalpgx.NewWithConfig, func(c *shoalpgx.Config) {
		c.MaxConns = 1
		c.Observer = obs
	})
	ctx := pgtest.Ctx(t)

	holders, err := holdWithAcquireFunc(ctx, p, obs)
	if err != nil {
		t.Fatal(err)
	}
	if len(holders) != 1 || holders[0].AcquiredBy != pkg+"holdWithAcquireFunc" {
		t.Fatalf("inside AcquireFunc, holders = %+v", holders)
	}

	rows, err := holdWithQuery(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	if got := obs.list(); len(got) != 1 || got[0].AcquiredBy != pkg+"holdWithQuery" {
		t.Fatalf("with a Query's rows open, holders = %+v", got)
	}
	rows.Close()

	c, err := holdWithAcquire(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if got := obs.list(); len(got) != 1 || got[0].AcquiredBy != pkg+"holdWithAcquire" {
		t.Fatalf("holders = %+v", got)
	}
	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err = p.Acquire(short)
	var ae *shoal.AcquireError
	if !errors.As(err, &ae) || ae.Exhausted == nil || ae.Exhausted.OldestBy != pkg+"holdWithAcquire" {
		t.Fatalf("an acquire on the full pool returned %v, want an AcquireError naming %sholdWithAcquire", err, pkg)
	}
}
