package shoalpgx

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

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

// A statement whose connection breaks before it leaves on every try gives
// up after the pool's attempts, MaxConns+1 as an acquire's, with the
// connection's error: one acquire per try.
func TestPipelineStatementBrokenEveryTimeGivesUpAfterMaxConnsPlusOne(t *testing.T) {
	p := newPipelinedPool(t, 4, 8, nil)
	ctx := pgtest.Ctx(t)
	if _, err := p.Exec(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
	left := &atomic.Int32{}
	const never = 1000 // more breaks than any try count
	left.Store(never)
	before := p.Stat().Pipelined().Acquires
	_, err := p.Exec(ctx, "select $1::int", breakOnEncode{p, left})
	tries := p.Stat().Pipelined().Acquires - before
	if err == nil || !strings.Contains(err.Error(), "broken by the test") {
		t.Fatalf("a statement whose connection broke on every try: %v, want the connection's error", err)
	}
	// A try on a connection that must describe the statement first breaks
	// there, before the argument is encoded: the acquires count the tries.
	if encoded := int64(never - left.Load()); tries != 5 || encoded < 1 || encoded > tries {
		t.Fatalf("%d acquires (%d encodings) before the error, want MaxConns+1 (5)", tries, encoded)
	}
}

// A statement every shared connection of which is refused as it is handed
// out (its host retired since it was dialled) gives up after the pool's
// attempts, MaxConns+1, with errPipeAdmit. Every connection is dialled to a
// host retired before the dial ends, by AfterConnect, as a failover that
// lands during each dial would.
func TestPipelineStatementRefusedEveryTimeGivesUpAfterMaxConnsPlusOne(t *testing.T) {
	var retiring atomic.Pointer[Pool]
	p := newPipelinedPool(t, 4, 8, func(c *Config) {
		c.AfterConnect = func(context.Context, *pgx.Conn) error {
			if p := retiring.Load(); p != nil {
				retireAllHosts(p)
			}
			return nil
		}
	})
	ctx := pgtest.Ctx(t)
	if _, err := p.Exec(ctx, "select 1"); err != nil {
		t.Fatal(err)
	}
	retiring.Store(p)
	retireAllHosts(p)
	before := p.Stat().Pipelined().Acquires
	_, err := p.Exec(ctx, "select $1::int", 1)
	tries := p.Stat().Pipelined().Acquires - before
	if !errors.Is(err, errPipeAdmit) {
		t.Fatalf("a statement refused every connection: %v, want %v", err, errPipeAdmit)
	}
	if tries != 5 {
		t.Fatalf("%d acquires before the error, want MaxConns+1 (5)", tries)
	}
	// Once connections are no longer refused, statements run again.
	retiring.Store(nil)
	pgtest.WaitFor(t, 5*time.Second, "a statement run", func() bool {
		_, err := p.Exec(ctx, "select 1")
		return err == nil
	})
}

// retireAllHosts retires every host of p, as a failover does: the
// connections open to them take no more statements.
func retireAllHosts(p *Pool) {
	p.hosts.mu.Lock()
	defer p.hosts.mu.Unlock()
	for _, h := range p.hosts.hosts {
		h.retire()
	}
}
