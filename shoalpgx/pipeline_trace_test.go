package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// pipeTracer records what pgx's query and batch tracers are told.
type pipeTracer struct {
	mu     sync.Mutex
	events []string
	ends   []error // each statement's and batch's end error, in order
}

func (t *pipeTracer) add(format string, args ...any) {
	t.mu.Lock()
	t.events = append(t.events, fmt.Sprintf(format, args...))
	t.mu.Unlock()
}

func (t *pipeTracer) addEnd(err error) {
	t.mu.Lock()
	t.ends = append(t.ends, err)
	t.mu.Unlock()
}

type pipeTraceKey struct{}

func (t *pipeTracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	t.add("query start %s %v pid=%v", data.SQL, data.Args, conn.PgConn().PID() != 0)
	return context.WithValue(ctx, pipeTraceKey{}, data.SQL)
}

func (t *pipeTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	t.addEnd(data.Err)
	t.add("query end %v %s err=%v", ctx.Value(pipeTraceKey{}), data.CommandTag, data.Err != nil)
}

func (t *pipeTracer) TraceBatchStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	t.add("batch start %d pid=%v", data.Batch.Len(), conn.PgConn().PID() != 0)
	return context.WithValue(ctx, pipeTraceKey{}, "batch")
}

func (t *pipeTracer) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	t.add("batch query %v %s %s err=%v", ctx.Value(pipeTraceKey{}), data.SQL, data.CommandTag, data.Err != nil)
}

func (t *pipeTracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchEndData) {
	t.addEnd(data.Err)
	t.add("batch end %v err=%v", ctx.Value(pipeTraceKey{}), data.Err != nil)
}

// pgx's QueryTracer and BatchTracer hear of pipelined statements as they
// would of the same statements on a whole connection.
func TestPipelineTracers(t *testing.T) {
	tr := &pipeTracer{}
	p := newPipelinedPool(t, 4, 8, func(c *Config) { c.ConnConfig.Tracer = tr })
	ctx := pgtest.Ctx(t)
	if _, err := p.Exec(ctx, "select $1::int", 1); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := p.QueryRow(ctx, "select $1::int", 2).Scan(&n); err != nil {
		t.Fatal(err)
	}
	// A Query that fails before it runs (its table is missing) ends its
	// trace without the rows closed, as pgx's does: pgx closes them.
	if _, err := p.Query(ctx, "select 1/$1::int from pipe_trace_missing", 0); err == nil {
		t.Fatal("a missing table: no error")
	}
	b := &pgx.Batch{}
	b.Queue("select 1")
	b.Queue("select 2")
	if err := p.SendBatch(ctx, b).Close(); err != nil {
		t.Fatal(err)
	}
	want := []string{
		"query start select $1::int [1] pid=true",
		"query end select $1::int SELECT 1 err=false",
		"query start select $1::int [2] pid=true",
		"query end select $1::int SELECT 1 err=false",
		"query start select 1/$1::int from pipe_trace_missing [0] pid=true",
		"query end select 1/$1::int from pipe_trace_missing  err=true",
		"batch start 2 pid=true",
		"batch query batch select 1 SELECT 1 err=false",
		"batch query batch select 2 SELECT 1 err=false",
		"batch end batch err=false",
	}
	if !slices.Equal(tr.events, want) {
		t.Fatalf("traced:\n%q\nwant:\n%q", tr.events, want)
	}
}

// A pipelined statement or batch whose caller gives up before its answer
// ends its trace with the caller's error, the context's, as on a whole
// connection: Exec, Query, QueryRow and SendBatch alike, one start and one
// end each, and the batch traces none of its queries.
func TestPipelineTraceEndsWhenTheCallerGivesUp(t *testing.T) {
	tr := &pipeTracer{}
	p := newPipelinedPool(t, 4, 8, func(c *Config) { c.ConnConfig.Tracer = tr })
	const sql = "select pg_sleep($1::float8)"
	// A shared connection open first, and its trace left out: dialling
	// one (SCRAM's hashing, under -race) can take longer than the 50ms
	// each statement below is given, and a statement whose deadline passes
	// before it has a connection is never traced, as in pgx.
	if _, err := p.Exec(pgtest.Ctx(t), "select 1"); err != nil {
		t.Fatal(err)
	}
	tr.mu.Lock()
	tr.events, tr.ends = nil, nil
	tr.mu.Unlock()
	before := p.Stat().Pipelined().Acquires
	for _, run := range []func(context.Context) error{
		func(ctx context.Context) error { _, err := p.Exec(ctx, sql, 0.5); return err },
		func(ctx context.Context) error { _, err := p.Query(ctx, sql, 0.5); return err },
		func(ctx context.Context) error { return p.QueryRow(ctx, sql, 0.5).Scan() },
		func(ctx context.Context) error {
			b := &pgx.Batch{}
			b.Queue(sql, 0.5)
			b.Queue("select 1")
			br := p.SendBatch(ctx, b)
			_, err := br.Exec()
			if cerr := br.Close(); cerr == nil {
				t.Error("a batch given up on closed without an error")
			}
			return err
		},
	} {
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		err := run(ctx)
		cancel()
		if err == nil {
			t.Fatal("a 500ms statement returned within a 50ms deadline")
		}
		// Its answer read, so that the next one finds an idle shared
		// connection rather than wait, past its deadline, for another.
		pgtest.WaitFor(t, 5*time.Second, "every answer read", func() bool { return p.Stat().AcquiredConns() == 0 })
	}
	if n := p.Stat().Pipelined().Acquires - before; n < 4 {
		t.Fatalf("%d of the 4 ran on a shared connection: the test would prove nothing", n)
	}
	want := slices.Repeat([]string{"query start " + sql + " [0.5] pid=true", "query end " + sql + "  err=true"}, 3)
	want = append(want, "batch start 2 pid=true", "batch end batch err=true")
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if !slices.Equal(tr.events, want) {
		t.Fatalf("traced:\n%q\nwant:\n%q", tr.events, want)
	}
	for i, err := range tr.ends {
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Errorf("trace %d ended with %v, want the context's error", i+1, err)
		}
	}
}

// pipePoolTracer is a pipeTracer that also hears the pool's acquires and
// releases.
type pipePoolTracer struct {
	pipeTracer
}

func (t *pipePoolTracer) TraceAcquireStart(ctx context.Context, _ *Pool, _ TraceAcquireStartData) context.Context {
	t.add("acquire start")
	return ctx
}

func (t *pipePoolTracer) TraceAcquireEnd(context.Context, *Pool, TraceAcquireEndData) {
	t.add("acquire end")
}

func (t *pipePoolTracer) TraceRelease(*Pool, TraceReleaseData) { t.add("release") }

// A pipelined Query's trace ends when its rows close, as pgx's does, not
// when Query returns; the acquire and release tracers hear nothing of
// pipelined statements (they hold no connection of the pool's); and the
// rows name no connection.
func TestPipelineQueryTraceEndsWhenRowsClose(t *testing.T) {
	tr := &pipePoolTracer{}
	p := newPipelinedPool(t, 4, 8, func(c *Config) { c.ConnConfig.Tracer = tr })
	ctx := pgtest.Ctx(t)
	rows, err := p.Query(ctx, "select generate_series(1, $1::int)", 3)
	if err != nil {
		t.Fatal(err)
	}
	if rows.Conn() != nil {
		t.Error("a pipelined query's rows name a connection")
	}
	tr.mu.Lock()
	before := slices.Clone(tr.events)
	tr.mu.Unlock()
	n := 0
	for rows.Next() {
		n++
	}
	rows.Close()
	if err := rows.Err(); err != nil || n != 3 {
		t.Fatalf("%d rows, %v", n, err)
	}
	wantBefore := []string{"query start select generate_series(1, $1::int) [3] pid=true"}
	if !slices.Equal(before, wantBefore) {
		t.Fatalf("traced before the rows closed:\n%q\nwant:\n%q", before, wantBefore)
	}
	want := append(wantBefore, "query end select generate_series(1, $1::int) SELECT 3 err=false")
	if !slices.Equal(tr.events, want) {
		t.Fatalf("traced:\n%q\nwant:\n%q", tr.events, want)
	}
	// A transaction takes a whole connection, and its acquire is traced:
	// the tracer above would have heard a pipelined one.
	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_ = tx.Rollback(ctx)
	if !slices.Contains(tr.events, "acquire start") || !slices.Contains(tr.events, "release") {
		t.Fatalf("a whole connection's acquire and release were not traced: %q", tr.events)
	}
}

// The pool's hooks for a connection handed out and given back are not
// called for shared connections, which pgx no longer drives: pipelined
// statements call none of them, a transaction's whole connection calls
// them as ever, and at Close only the whole connection is closed through
// BeforeClose.
func TestPipelineHooksAreTheWholeConnections(t *testing.T) {
	var prepare, ping, after, closing atomic.Int64
	p := newPipelinedPool(t, 4, 8, func(c *Config) {
		c.PrepareConn = func(context.Context, *pgx.Conn) (bool, error) { prepare.Add(1); return true, nil }
		c.ShouldPing = func(context.Context, ShouldPingParams) bool { ping.Add(1); return false }
		c.AfterRelease = func(*pgx.Conn) bool { after.Add(1); return true }
		c.BeforeClose = func(*pgx.Conn) { closing.Add(1) }
	})
	ctx := pgtest.Ctx(t)
	pgtest.WaitFor(t, 5*time.Second, "two shared connections open", func() bool { return len(p.pipe.conns()) == 2 })
	for i := range 10 {
		var n int
		if err := p.QueryRow(ctx, "select $1::int", i).Scan(&n); err != nil || n != i {
			t.Fatal(n, err)
		}
	}
	if n := prepare.Load() + ping.Load() + after.Load(); n != 0 {
		t.Fatalf("pipelined statements called the hooks %d times (PrepareConn %d, ShouldPing %d, AfterRelease %d)", n, prepare.Load(), ping.Load(), after.Load())
	}
	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	if prepare.Load() != 1 || after.Load() != 1 {
		t.Fatalf("a transaction's connection: PrepareConn %d, AfterRelease %d, want 1 and 1", prepare.Load(), after.Load())
	}
	whole := p.core.Stats().TotalConns
	if whole == 0 {
		t.Fatal("no whole connection open after the transaction: the test would prove nothing")
	}
	p.Close()
	if n := closing.Load(); n != int64(whole) {
		t.Fatalf("BeforeClose called %d times at Close, want %d: once per whole connection, never for the 2 shared ones", n, whole)
	}
}
