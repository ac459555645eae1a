package shoalpgx

import (
	"database/sql/driver"
	"errors"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// breakOnEncode is an argument whose encoding breaks every open shared
// connection, the one it is being encoded for among them, its first times:
// a connection that breaks after a statement took it and before the
// statement left.
type breakOnEncode struct {
	p    *Pool
	left *atomic.Int32
}

func (b breakOnEncode) Value() (driver.Value, error) {
	if b.left.Add(-1) >= 0 {
		for _, c := range b.p.pipe.conns() {
			c.fail(errors.New("broken by the test"))
		}
	}
	return int64(7), nil
}

// A statement or batch whose connection broke before it left goes to
// another, as often as the pool's attempts allow (MaxConns+1, as an
// acquire), and its trace, started once as it was first encoded, ends
// naming the connection it ran on.
func TestPipelineStatementBrokenBeforeItLeftGoesElsewhere(t *testing.T) {
	tr := &pidTracer{}
	p := newTestPool(t, func(c *Config) {
		c.MaxConns, c.Pipeline = 8, 8
		c.ConnConfig.Tracer = tr
	})
	ctx := pgtest.Ctx(t)
	if _, err := p.Exec(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
	tr.mu.Lock()
	tr.starts, tr.ends = nil, nil
	tr.mu.Unlock()
	left := &atomic.Int32{}
	left.Store(4) // more than the three tries a statement once had
	var n int
	var ran uint32
	if err := p.QueryRow(ctx, "select $1::int, pg_backend_pid()", breakOnEncode{p, left}).Scan(&n, &ran); err != nil || n != 7 {
		t.Fatalf("a statement after its connection broke 4 times before it left: %d, %v", n, err)
	}
	if l := left.Load(); l >= 0 {
		t.Fatalf("the argument broke the connections %d times, want 4", 4-l)
	}
	left.Store(4)
	b := &pgx.Batch{}
	b.Queue("select $1::int, pg_backend_pid()", breakOnEncode{p, left})
	br := p.SendBatch(ctx, b)
	var batchRan uint32
	if err := br.QueryRow().Scan(&n, &batchRan); err != nil {
		t.Fatalf("a batch after its connection broke 4 times before it left: %v", err)
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	tr.tracedOnce(t, ran, batchRan)
}
