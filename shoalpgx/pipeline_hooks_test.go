package shoalpgx

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// BeforeAcquire, set alone (PrepareConn takes its place when both are),
// is not called for shared connections either: pipelined statements call
// it never, a transaction's whole connection once.
func TestPipelineBeforeAcquireIsTheWholeConnections(t *testing.T) {
	var before atomic.Int64
	p := newPipelinedPool(t, 4, 8, func(c *Config) {
		c.BeforeAcquire = func(context.Context, *pgx.Conn) bool { before.Add(1); return true }
	})
	ctx := pgtest.Ctx(t)
	pgtest.WaitFor(t, 5*time.Second, "two shared connections open", func() bool { return len(p.pipe.conns()) == 2 })
	shared := p.Stat().Pipelined().Acquires
	for i := range 10 {
		var n int
		if err := p.QueryRow(ctx, "select $1::int", i).Scan(&n); err != nil || n != i {
			t.Fatal(n, err)
		}
	}
	if n := p.Stat().Pipelined().Acquires - shared; n != 10 {
		t.Fatalf("%d of the 10 statements ran on a shared connection: the test would prove too little", n)
	}
	if n := before.Load(); n != 0 {
		t.Fatalf("pipelined statements called BeforeAcquire %d times", n)
	}
	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if n := before.Load(); n != 1 {
		t.Fatalf("a transaction's connection called BeforeAcquire %d times, want 1", n)
	}
}

// prepTracer counts what pgx's PrepareTracer is told; it is a QueryTracer
// too, as pgx's ConnConfig.Tracer must be.
type prepTracer struct {
	prepares atomic.Int64
}

func (t *prepTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	return ctx
}

func (t *prepTracer) TraceQueryEnd(context.Context, *pgx.Conn, pgx.TraceQueryEndData) {}

func (t *prepTracer) TracePrepareStart(ctx context.Context, _ *pgx.Conn, _ pgx.TracePrepareStartData) context.Context {
	t.prepares.Add(1)
	return ctx
}

func (t *prepTracer) TracePrepareEnd(context.Context, *pgx.Conn, pgx.TracePrepareEndData) {}

// pgx's PrepareTracer hears of no pipelined statement, though one is
// prepared beside its first run on each shared connection in
// QueryExecModeCacheStatement; the same statement in a transaction, on a
// whole connection, is prepared by pgx, which tells it.
func TestPipelinePrepareTracerHearsOfNoPipelinedStatement(t *testing.T) {
	tr := &prepTracer{}
	p := newPipelinedPool(t, 4, 8, func(c *Config) {
		c.ConnConfig.Tracer = tr
		c.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeCacheStatement
	})
	ctx := pgtest.Ctx(t)
	shared := p.Stat().Pipelined().Acquires
	for i := range 5 {
		var n int
		if err := p.QueryRow(ctx, "select $1::int + 1", i).Scan(&n); err != nil || n != i+1 {
			t.Fatal(n, err)
		}
		if _, err := p.Exec(ctx, "select $1::text", "x"); err != nil {
			t.Fatal(err)
		}
	}
	if n := p.Stat().Pipelined().Acquires - shared; n != 10 {
		t.Fatalf("%d of the 10 statements ran on a shared connection: the test would prove too little", n)
	}
	if n := tr.prepares.Load(); n != 0 {
		t.Fatalf("pgx's PrepareTracer heard of %d pipelined statements", n)
	}
	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tx.Rollback(ctx) }()
	if _, err := tx.Exec(ctx, "select $1::int + 1", 1); err != nil {
		t.Fatal(err)
	}
	if tr.prepares.Load() == 0 {
		t.Fatal("pgx's PrepareTracer heard nothing of a statement on a whole connection: the test would prove nothing")
	}
}
