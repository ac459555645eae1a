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

// pipeTracer records what pgx's query and batch tracers are told.
type pipeTracer struct {
	mu     sync.Mutex
	events []string
}

func (t *pipeTracer) add(format string, args ...any) {
	t.mu.Lock()
	t.events = append(t.events, fmt.Sprintf(format, args...))
	t.mu.Unlock()
}

type pipeTraceKey struct{}

func (t *pipeTracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, data pgx.TraceQueryStartData) context.Context {
	t.add("query start %s %v pid=%v", data.SQL, data.Args, conn.PgConn().PID() != 0)
	return context.WithValue(ctx, pipeTraceKey{}, data.SQL)
}

func (t *pipeTracer) TraceQueryEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceQueryEndData) {
	t.add("query end %v %s err=%v", ctx.Value(pipeTraceKey{}), data.CommandTag, data.Err != nil)
}

func (t *pipeTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchStartData) context.Context {
	t.add("batch start %d", data.Batch.Len())
	return context.WithValue(ctx, pipeTraceKey{}, "batch")
}

func (t *pipeTracer) TraceBatchQuery(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchQueryData) {
	t.add("batch query %v %s %s err=%v", ctx.Value(pipeTraceKey{}), data.SQL, data.CommandTag, data.Err != nil)
}

func (t *pipeTracer) TraceBatchEnd(ctx context.Context, _ *pgx.Conn, data pgx.TraceBatchEndData) {
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
	rows, _ := p.Query(ctx, "select 1/$1::int", 0)
	rows.Close()
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
		"query start select 1/$1::int [0] pid=true",
		"query end select 1/$1::int  err=true",
		"batch start 2",
		"batch query batch select 1 SELECT 1 err=false",
		"batch query batch select 2 SELECT 1 err=false",
		"batch end batch err=false",
	}
	if !slices.Equal(tr.events, want) {
		t.Fatalf("traced:\n%q\nwant:\n%q", tr.events, want)
	}
}
