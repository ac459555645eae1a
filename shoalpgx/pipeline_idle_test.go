package shoalpgx

import (
	"context"
	"crypto/tls"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// killIdleSessions ends the test's sessions on the server and waits until
// their backends are gone, so that each has sent its fatal error and
// closed its socket before the test goes on. It waits for the backends it
// ended, not for the application's sessions to reach none: the pool may
// dial a new one meanwhile.
func killIdleSessions(t *testing.T, app string) {
	t.Helper()
	ctx := pgtest.Ctx(t)
	admin := pgtest.AdminConn(t)
	var killed []int32
	if err := admin.QueryRow(ctx, "with s as materialized (select pid from pg_stat_activity where application_name = $1) select coalesce(array_agg(pid), '{}') from s where pg_terminate_backend(pid)", app).Scan(&killed); err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, 10*time.Second, "the killed backends gone", func() bool {
		var n int
		err := admin.QueryRow(ctx, "select count(*) from pg_stat_activity where pid = any($1)", killed).Scan(&n)
		return err == nil && n == 0
	})
}

// A shared connection the server ended while it sat idle is replaced, not
// handed a statement that would fail with the server's FATAL error: each
// statement after the kill succeeds, through Exec, QueryRow and SendBatch,
// as it does on whole connections. In plain text the look at the socket
// sees the server's error; over TLS it sees bytes it cannot read, which
// close the connection just the same.
func TestPipelineIdleSharedConnectionKilledIsReplaced(t *testing.T) {
	for _, tc := range []struct {
		name string
		tls  bool
	}{{"plain", false}, {"TLS", true}} {
		t.Run(tc.name, func(t *testing.T) {
			app := pgtest.AppName(t)
			p := newTestPool(t, func(c *Config) {
				c.MaxConns, c.Pipeline = 4, 8
				c.ConnConfig.RuntimeParams["application_name"] = app
				if tc.tls {
					// Debian's self-signed certificate: encryption is
					// what is tested.
					c.ConnConfig.TLSConfig = &tls.Config{InsecureSkipVerify: true}
					c.ConnConfig.Fallbacks = nil
				}
			})
			ctx := pgtest.Ctx(t)
			for range 3 {
				if _, err := p.Exec(ctx, "select $1::int", 1); err != nil {
					t.Fatal(err)
				}
			}
			if n := p.Stat().Pipelined().TotalConns; n == 0 {
				t.Fatal("no shared connection open before the kill")
			}
			if ssl := sessionSSL(t, app); ssl != tc.tls {
				t.Fatalf("the sessions' ssl is %t, want %t", ssl, tc.tls)
			}
			killIdleSessions(t, app)
			for i := range 4 {
				if _, err := p.Exec(ctx, "select $1::int", i); err != nil {
					t.Errorf("Exec %d after the kill: %v", i, err)
				}
			}
			killIdleSessions(t, app)
			var n int
			if err := p.QueryRow(ctx, "select $1::int", 7).Scan(&n); err != nil || n != 7 {
				t.Errorf("QueryRow after the kill: %d, %v", n, err)
			}
			killIdleSessions(t, app)
			b := &pgx.Batch{}
			b.Queue("select $1::int", 8)
			if err := p.SendBatch(ctx, b).Close(); err != nil {
				t.Errorf("SendBatch after the kill: %v", err)
			}
		})
	}
}

// sessionSSL reports whether the test's sessions on the server use TLS.
func sessionSSL(t *testing.T, app string) bool {
	t.Helper()
	var ssl bool
	err := pgtest.AdminConn(t).QueryRow(pgtest.Ctx(t), "select bool_and(s.ssl) from pg_stat_ssl s join pg_stat_activity a using (pid) where a.application_name = $1", app).Scan(&ssl)
	if err != nil {
		t.Fatal(err)
	}
	return ssl
}

// With HealthCheckAfter 0 every check is off, the look at an idle shared
// connection's socket too: the first statement after the kill fails with
// the server's error, as on a whole connection, and the connection is
// replaced for the statements after it.
func TestPipelineIdleLookOffWithHealthCheckAfterZero(t *testing.T) {
	app := pgtest.AppName(t)
	p := newTestPool(t, func(c *Config) {
		c.MaxConns, c.Pipeline, c.HealthCheckAfter = 4, 8, 0
		c.ConnConfig.RuntimeParams["application_name"] = app
	})
	ctx := pgtest.Ctx(t)
	if _, err := p.Exec(ctx, "select $1::int", 1); err != nil {
		t.Fatal(err)
	}
	killIdleSessions(t, app)
	if _, err := p.Exec(ctx, "select $1::int", 1); err == nil {
		t.Fatal("a statement on a killed shared connection succeeded with every check off")
	}
	pgtest.WaitFor(t, 10*time.Second, "a statement that succeeds", func() bool {
		_, err := p.Exec(ctx, "select $1::int", 1)
		return err == nil
	})
}

// After a restart every shared connection is dead, five or more of them: a
// statement passes over every one, as an acquire does, and runs on a new
// one.
func TestPipelineStatementPassesEveryDeadSharedConnection(t *testing.T) {
	app := pgtest.AppName(t)
	p := newTestPool(t, func(c *Config) {
		c.MaxConns, c.Pipeline = 16, 8
		c.ConnConfig.RuntimeParams["application_name"] = app
	})
	ctx := pgtest.Ctx(t)
	// Statements that overlap make the pool open a shared connection for
	// each (BusyStreams 1), up to its half of MaxConns.
	for round := 0; round < 5 && p.Stat().Pipelined().TotalConns < 5; round++ {
		var wg sync.WaitGroup
		for range 8 {
			wg.Go(func() {
				if _, err := p.Exec(ctx, "select pg_sleep(0.05)"); err != nil {
					t.Error(err)
				}
			})
		}
		wg.Wait()
	}
	open := p.Stat().Pipelined().TotalConns
	if open < 5 {
		t.Fatalf("%d shared connections open, want 5 or more to kill", open)
	}
	killIdleSessions(t, app)
	cctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	if _, err := p.Exec(cctx, "select $1::int", 1); err != nil {
		t.Fatalf("a statement after %d shared connections were killed: %v", open, err)
	}
}

// pidTracer records the backend each trace of a query or batch names at
// its start and at its end.
type pidTracer struct {
	mu         sync.Mutex
	starts     []uint32
	ends       []uint32
	batchEnds  []uint32
	batchStart int
}

// tracedOnce fails t unless one statement, then one batch, were traced
// once each, the statement's end naming backend ran and the batch's
// batchRan, where each ran.
func (tr *pidTracer) tracedOnce(t *testing.T, ran, batchRan uint32) {
	t.Helper()
	tr.mu.Lock()
	defer tr.mu.Unlock()
	if len(tr.starts) != 1 || len(tr.ends) != 1 {
		t.Fatalf("%d starts and %d ends traced for one statement, want 1 and 1", len(tr.starts), len(tr.ends))
	}
	if tr.ends[0] != ran {
		t.Errorf("the trace ended naming backend %d; the statement ran on %d", tr.ends[0], ran)
	}
	if tr.batchStart != 1 || len(tr.batchEnds) != 1 || tr.batchEnds[0] != batchRan {
		t.Errorf("the batch: %d starts, ends naming %v; want 1 start and an end naming %d", tr.batchStart, tr.batchEnds, batchRan)
	}
}

func (t *pidTracer) TraceQueryStart(ctx context.Context, conn *pgx.Conn, _ pgx.TraceQueryStartData) context.Context {
	t.mu.Lock()
	t.starts = append(t.starts, conn.PgConn().PID())
	t.mu.Unlock()
	return ctx
}

func (t *pidTracer) TraceQueryEnd(_ context.Context, conn *pgx.Conn, _ pgx.TraceQueryEndData) {
	t.mu.Lock()
	t.ends = append(t.ends, conn.PgConn().PID())
	t.mu.Unlock()
}

func (t *pidTracer) TraceBatchStart(ctx context.Context, _ *pgx.Conn, _ pgx.TraceBatchStartData) context.Context {
	t.mu.Lock()
	t.batchStart++
	t.mu.Unlock()
	return ctx
}

func (t *pidTracer) TraceBatchQuery(context.Context, *pgx.Conn, pgx.TraceBatchQueryData) {}

func (t *pidTracer) TraceBatchEnd(_ context.Context, conn *pgx.Conn, _ pgx.TraceBatchEndData) {
	t.mu.Lock()
	t.batchEnds = append(t.batchEnds, conn.PgConn().PID())
	t.mu.Unlock()
}

// A statement that passes over a shared connection the server ended, to
// run on another, is traced once, and its trace ends naming the
// connection it ran on.
func TestPipelineTraceOfAStatementThatPassedADeadConnection(t *testing.T) {
	app := pgtest.AppName(t)
	tr := &pidTracer{}
	p := newTestPool(t, func(c *Config) {
		c.MaxConns, c.Pipeline = 4, 8
		c.ConnConfig.RuntimeParams["application_name"] = app
		c.ConnConfig.Tracer = tr
	})
	ctx := pgtest.Ctx(t)
	var before uint32
	if err := p.QueryRow(ctx, "select pg_backend_pid()").Scan(&before); err != nil {
		t.Fatal(err)
	}
	killIdleSessions(t, app)
	tr.mu.Lock()
	tr.starts, tr.ends = nil, nil
	tr.mu.Unlock()
	var ran uint32
	if err := p.QueryRow(ctx, "select pg_backend_pid()").Scan(&ran); err != nil {
		t.Fatal(err)
	}
	killIdleSessions(t, app)
	b := &pgx.Batch{}
	b.Queue("select pg_backend_pid()")
	var batchRan uint32
	br := p.SendBatch(ctx, b)
	if err := br.QueryRow().Scan(&batchRan); err != nil {
		t.Fatal(err)
	}
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	tr.tracedOnce(t, ran, batchRan)
}
