package shoalpgx

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// sameTracer records what pgx's query and batch tracers are told, the
// arguments in full, so that a pool with pipelining and one without can be
// compared statement by statement.
type sameTracer struct {
	mu     sync.Mutex
	n      int
	events []string
}

type sameTraceKey struct{}

func (t *sameTracer) add(ctx context.Context, format string, args ...any) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.events = append(t.events, fmt.Sprintf("#%v ", ctx.Value(sameTraceKey{}))+fmt.Sprintf(format, args...))
}

// started numbers a trace's context, so that its end is seen to carry it.
func (t *sameTracer) started(ctx context.Context) context.Context {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.n++
	return context.WithValue(ctx, sameTraceKey{}, t.n)
}

func (t *sameTracer) TraceQueryStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	ctx = t.started(ctx)
	t.add(ctx, "query start %q %#v", data.SQL, data.Args)
	return ctx
}

func (t *sameTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	t.add(ctx, "query end %q %v", data.CommandTag, data.Err)
}

func (t *sameTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	ctx = t.started(ctx)
	t.add(ctx, "batch start %d", data.Batch.Len())
	return ctx
}

func (t *sameTracer) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	t.add(ctx, "batch query %q %#v %q %v", data.SQL, data.Args, data.CommandTag, data.Err)
}

func (t *sameTracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchEndData) {
	t.add(ctx, "batch end %v", data.Err)
}

// tracedAlike runs run on a pool without pipelining and on one with it,
// each with a sameTracer, and fails unless both tracers were told the same.
// It returns how many times the second acquired a shared connection:
// none, and what was compared ran on whole connections both times.
func tracedAlike(t *testing.T, run func(ctx context.Context, p *Pool)) (shared int64) {
	t.Helper()
	return tracedAlikeIn(t, pgx.QueryExecModeCacheStatement, func(ctx context.Context, p *Pool) string {
		run(ctx, p)
		return ""
	})
}

// tracedAlikeIn is tracedAlike in mode, run's result compared as well.
func tracedAlikeIn(t *testing.T, mode pgx.QueryExecMode, run func(ctx context.Context, p *Pool) string) (shared int64) {
	t.Helper()
	var got [2][]string
	var res [2]string
	for i, depth := range []int{0, 8} {
		tr := &sameTracer{}
		p := newTestPool(t, func(c *Config) {
			c.MaxConns = 4
			c.Pipeline = depth
			c.ConnConfig.Tracer = tr
			c.ConnConfig.DefaultQueryExecMode = mode
		})
		res[i] = run(pgtest.Ctx(t), p)
		shared = p.Stat().Pipelined().Acquires
		p.Close()
		got[i] = tr.events
	}
	if !slices.Equal(got[0], got[1]) {
		t.Fatalf("%v: traced without pipelining:\n%q\nwith:\n%q", mode, got[0], got[1])
	}
	if res[0] != res[1] {
		t.Fatalf("%v: without pipelining: %s\nwith: %s", mode, res[0], res[1])
	}
	return shared
}

// mustHaveShared fails t when tracedAlike's pipelined pool ran nothing on
// a shared connection, which would have made its comparison vacuous.
func mustHaveShared(t *testing.T, what string, shared int64) {
	t.Helper()
	if shared == 0 {
		t.Fatalf("%s: nothing ran on a shared connection", what)
	}
}

// A pipelined statement's trace starts with the SQL and arguments its
// caller passed, options and named arguments included, as pgx's does.
func TestPipelineTraceStartsWithTheCallersArguments(t *testing.T) {
	mustHaveShared(t, "statements", tracedAlike(t, func(ctx context.Context, p *Pool) {
		if _, err := p.Exec(ctx, "select $1::int", pgx.QueryExecModeExec, 1); err != nil {
			t.Fatal(err)
		}
		rows, err := p.Query(ctx, "select @a::int", pgx.NamedArgs{"a": 2})
		if err != nil {
			t.Fatal(err)
		}
		rows.Close()
		var n int
		if err := p.QueryRow(ctx, "select @a::int", pgx.QueryExecModeCacheDescribe, pgx.StrictNamedArgs{"a": 3}).Scan(&n); err != nil {
			t.Fatal(err)
		}
	}))
}

// A pipelined batch's queries are traced with the SQL and arguments their
// named arguments were rewritten to, as pgx's are.
func TestPipelineTraceBatchQueryRewritten(t *testing.T) {
	mustHaveShared(t, "batch", tracedAlike(t, func(ctx context.Context, p *Pool) {
		b := &pgx.Batch{}
		b.Queue("select @a::int", pgx.NamedArgs{"a": 1})
		b.Queue("select 1/@b::int", pgx.StrictNamedArgs{"b": 0})
		if err := p.SendBatch(ctx, b).Close(); err == nil {
			t.Fatal("a division by zero: no error")
		}
	}))
}

// A pipelined statement or batch whose named arguments cannot be
// rewritten is traced, start and end with the error, as pgx traces it.
func TestPipelineTraceRewriteFailure(t *testing.T) {
	tracedAlike(t, func(ctx context.Context, p *Pool) {
		const sql = "select @a::int + @b::int"
		args := pgx.StrictNamedArgs{"a": 1}
		if _, err := p.Exec(ctx, sql, args); err == nil {
			t.Fatal("Exec: a named argument missing: no error")
		}
		if _, err := p.Query(ctx, sql, args); err == nil {
			t.Fatal("Query: a named argument missing: no error")
		}
		if err := p.QueryRow(ctx, sql, args).Scan(new(int)); err == nil {
			t.Fatal("QueryRow: a named argument missing: no error")
		}
		b := &pgx.Batch{}
		b.Queue("select 1")
		b.Queue(sql, args)
		if err := p.SendBatch(ctx, b).Close(); err == nil {
			t.Fatal("SendBatch: a named argument missing: no error")
		}
	})
}

// A batch's query read as rows is traced when its rows close, with their
// error, a Scan's included, as pgx traces it; and in the modes where pgx
// sends a batch as a pipeline (all but QueryExecModeExec), that error is
// the batch's from then on, as it is in pgx.
func TestPipelineTraceBatchRowsAtClose(t *testing.T) {
	for _, mode := range []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec} {
		shared := tracedAlikeIn(t, mode, func(ctx context.Context, p *Pool) string {
			var out []string
			b := &pgx.Batch{}
			b.Queue("select 'x' || $1::text", "a")
			b.Queue("select g from generate_series(1, $1::int) g", 2)
			b.Queue("select $1::int", 3)
			br := p.SendBatch(ctx, b)
			var n int
			out = append(out, fmt.Sprint(br.QueryRow().Scan(&n)))
			rows, err := br.Query()
			out = append(out, fmt.Sprint(err))
			if err == nil {
				for rows.Next() {
					p.Exec(ctx, "select $1::int", 4) // while the rows are open
				}
				rows.Close()
				out = append(out, fmt.Sprint(rows.Err()))
			}
			_, err = br.Exec()
			out = append(out, fmt.Sprint(err), fmt.Sprint(br.Close()))
			return fmt.Sprint(out)
		})
		mustHaveShared(t, fmt.Sprint(mode), shared)
	}
}

// pgx's tracers hear the same of the same statements with pipelining as
// without, in every mode that pipelines: Exec, Query with its rows read,
// closed early, failing on a row or a Scan, QueryRow, and batches read
// in part or failing. (What still differs is in the package doc.)
func TestPipelineTracedAsWithoutPipelining(t *testing.T) {
	modes := []pgx.QueryExecMode{pgx.QueryExecModeCacheStatement, pgx.QueryExecModeCacheDescribe,
		pgx.QueryExecModeDescribeExec, pgx.QueryExecModeExec, pgx.QueryExecModeSimpleProtocol}
	for _, mode := range modes {
		shared := tracedAlikeIn(t, mode, func(ctx context.Context, p *Pool) string {
			var out []string
			note := func(v ...any) { out = append(out, fmt.Sprint(v...)) }
			for range 2 { // a cache's first run and a later one
				note(p.Exec(ctx, "select $1::int", 1))
				note(p.Exec(ctx, "select 1"))
				note(p.Exec(ctx, "select 1/$1::int", 0))
				note(p.Exec(ctx, "selec $1::int", 0))
				for _, sql := range []string{"select g from generate_series(1, $1::int) g", "select 1/(2 - g) from generate_series(1, $1::int) g", "selec $1::int"} {
					rows, err := p.Query(ctx, sql, 3)
					note(err)
					for rows.Next() {
					}
					note(rows.CommandTag(), rows.Err())
				}
				rows, err := p.Query(ctx, "select g from generate_series(1, $1::int) g", 3)
				note(err)
				rows.Next()
				rows.Close()
				note(rows.CommandTag(), rows.Err())
				rows, err = p.Query(ctx, "select 'x' || $1::text", "a")
				note(err)
				for rows.Next() {
					note(rows.Scan(new(int)))
				}
				note(rows.Err())
				note(p.QueryRow(ctx, "select $1::int where false", 1).Scan(new(int)))
				note(p.QueryRow(ctx, "select 'x' || $1::text", "a").Scan(new(int)))
				note(p.QueryRow(ctx, "select $1::int", 5).Scan(new(int)))

				b := &pgx.Batch{}
				b.Queue("select $1::int", 1)
				b.Queue("select g from generate_series(1, $1::int) g", 2)
				b.Queue("select $1::int", 3)
				br := p.SendBatch(ctx, b)
				note(br.Exec())
				rows, err = br.Query()
				note(err)
				for rows.Next() {
				}
				note(rows.CommandTag(), rows.Err(), br.Close())
				if mode != pgx.QueryExecModeExec {
					// pgx's QueryExecModeExec traces the queries after
					// the failed one too.
					b = &pgx.Batch{}
					b.Queue("select $1::int", 1)
					b.Queue("select 1/$1::int", 0)
					b.Queue("select $1::int", 3)
					note(p.SendBatch(ctx, b).Close())
				}
			}
			return fmt.Sprint(out)
		})
		if mode != pgx.QueryExecModeSimpleProtocol { // which never pipelines
			mustHaveShared(t, fmt.Sprint(mode), shared)
		}
	}
}
