package shoalpgx

import (
	"context"
	"errors"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// poolTracer records the pool's acquire and release events. It is also a
// pgx.QueryTracer, as a real tracer is (pgx takes ConnConfig.Tracer as
// one), with methods that do nothing.
type poolTracer struct {
	mu       sync.Mutex
	starts   int
	ends     []TraceAcquireEndData
	releases []TraceReleaseData
	pool     *Pool // the pool every event named, nil until the first
	bad      []string
}

type traceKey struct{}

func (tr *poolTracer) seen(p *Pool) {
	if tr.pool == nil {
		tr.pool = p
	} else if tr.pool != p {
		tr.bad = append(tr.bad, "an event named another pool")
	}
}

func (tr *poolTracer) TraceAcquireStart(ctx context.Context, p *Pool, _ TraceAcquireStartData) context.Context {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.seen(p)
	tr.starts++
	return context.WithValue(ctx, traceKey{}, tr.starts)
}

func (tr *poolTracer) TraceAcquireEnd(ctx context.Context, p *Pool, data TraceAcquireEndData) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.seen(p)
	if n, _ := ctx.Value(traceKey{}).(int); n != tr.starts {
		tr.bad = append(tr.bad, "TraceAcquireEnd did not get TraceAcquireStart's context")
	}
	tr.ends = append(tr.ends, data)
}

func (tr *poolTracer) TraceRelease(p *Pool, data TraceReleaseData) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	tr.seen(p)
	tr.releases = append(tr.releases, data)
}

func (tr *poolTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (tr *poolTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

// counts returns the events so far: acquire starts, ends, releases.
func (tr *poolTracer) counts() (int, int, int) {
	tr.mu.Lock()
	defer tr.mu.Unlock()
	return tr.starts, len(tr.ends), len(tr.releases)
}

// A tracer on ConnConfig.Tracer that is an AcquireTracer and a
// ReleaseTracer sees every acquire start and end, with the connection or the
// error, and every release, those of the pool's own operations too.
func TestTracerSeesAcquiresAndReleases(t *testing.T) {
	tr := &poolTracer{}
	errRefused := errors.New("refused by PrepareConn")
	var refuse bool
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 1
		c.ConnConfig.Tracer = tr
		c.PrepareConn = func(context.Context, *pgx.Conn) (bool, error) {
			if refuse {
				return true, errRefused
			}
			return true, nil
		}
	})
	ctx := pgtest.Ctx(t)

	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	conn := c.Conn()
	c.Release()
	c.Release() // a second Release is no release
	if s, e, r := tr.counts(); s != 1 || e != 1 || r != 1 {
		t.Fatalf("after Acquire and Release: %d starts, %d ends, %d releases; want 1, 1, 1", s, e, r)
	}
	if end := tr.ends[0]; end.Conn != conn || end.Err != nil {
		t.Errorf("TraceAcquireEnd got %+v, want the connection handed out and no error", end)
	}
	if rel := tr.releases[0]; rel.Conn != conn {
		t.Errorf("TraceRelease got %+v, want the connection released", rel)
	}

	// The pool's operations acquire and release too.
	if _, err := p.Exec(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
	var one int
	if err := p.QueryRow(ctx, "select 1").Scan(&one); err != nil {
		t.Fatal(err)
	}
	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	if s, e, r := tr.counts(); s != 4 || e != 4 || r != 4 {
		t.Fatalf("after Exec, QueryRow and Begin/Commit: %d starts, %d ends, %d releases; want 4 of each", s, e, r)
	}

	// Failed acquires end with their error and no connection.
	refuse = true
	if _, err := p.Acquire(ctx); !errors.Is(err, errRefused) {
		t.Fatalf("Acquire: %v, want PrepareConn's error", err)
	}
	refuse = false
	canceled, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := p.Acquire(canceled); !errors.Is(err, context.Canceled) {
		t.Fatalf("Acquire with a cancelled context: %v", err)
	}
	s, e, r := tr.counts()
	if s != 6 || e != 6 || r != 4 {
		t.Fatalf("after 2 failed acquires: %d starts, %d ends, %d releases; want 6, 6, 4", s, e, r)
	}
	for i, want := range []error{errRefused, context.Canceled} {
		if end := tr.ends[4+i]; end.Conn != nil || !errors.Is(end.Err, want) {
			t.Errorf("failed acquire %d: TraceAcquireEnd got %+v, want no connection and %v", i, end, want)
		}
	}

	// Hijack takes the connection out without a release.
	c, err = p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	hijacked := c.Hijack()
	defer hijacked.Close(ctx)
	if _, _, r := tr.counts(); r != 4 {
		t.Errorf("Hijack traced as a release")
	}

	tr.mu.Lock()
	defer tr.mu.Unlock()
	if tr.pool != p {
		t.Errorf("events named pool %p, want %p", tr.pool, p)
	}
	for _, b := range tr.bad {
		t.Error(b)
	}
}

// A hook that panics during a traced acquire still ends the acquire's
// trace, as pgxpool's deferred end does, so that a span is not left open.
func TestTracerEndsAnAcquireWhoseHookPanics(t *testing.T) {
	tr := &poolTracer{}
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 1
		c.ConnConfig.Tracer = tr
		c.PrepareConn = func(context.Context, *pgx.Conn) (bool, error) { panic("prepare blew up") }
	})
	func() {
		defer func() { _ = recover() }()
		_, _ = p.Acquire(pgtest.Ctx(t))
	}()
	if s, e, _ := tr.counts(); s != 1 || e != 1 {
		t.Fatalf("%d starts, %d ends; want the panicking acquire started and ended", s, e)
	}
}
