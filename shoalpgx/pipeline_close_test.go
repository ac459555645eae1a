package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// Close waits for callers, not for statements whose callers gave up: a
// pipelined pg_sleep(3600) abandoned after it started would otherwise hold
// Close for an hour. The server's backend is told to stop it too. The
// caller gives up before Close, or while Close waits for it.
func TestPipelineCloseDoesNotWaitForAbandonedStatements(t *testing.T) {
	for _, whileClosing := range []bool{false, true} {
		name := map[bool]string{false: "given up before Close", true: "given up while Close waits"}[whileClosing]
		t.Run(name, func(t *testing.T) {
			p, running := closeTestPool(t, 4, nil)
			ctx := pgtest.Ctx(t)
			sleeping := func() int { return running("select pg_sleep") }

			qctx, cancel := context.WithCancel(ctx)
			done := make(chan error, 1)
			go func() {
				_, err := p.Exec(qctx, "select pg_sleep($1::float8)", 3600)
				done <- err
			}()
			pgtest.WaitFor(t, 10*time.Second, "the statement running at the server", func() bool { return sleeping() == 1 })
			if n := p.Stat().Pipelined().Leases; n != 1 {
				t.Fatalf("%d statements in flight on shared connections, want the one, pipelined", n)
			}
			var closed <-chan struct{}
			if whileClosing {
				closed = startClose(p)
				pgtest.WaitFor(t, 10*time.Second, "Close under way", p.pipe.closing.Load)
			}
			cancel()
			if err := <-done; !errors.Is(err, context.Canceled) {
				t.Fatalf("the abandoned statement: %v, want context.Canceled", err)
			}
			if !whileClosing {
				closed = startClose(p)
			}
			closedWithin(t, closed, "Close waits for a statement whose caller gave up")
			pgtest.WaitFor(t, 10*time.Second, "the server to stop the abandoned statement", func() bool { return sleeping() == 0 })
		})
	}
}

// A cancel request that reaches the backend between two statements is
// dropped, so Close goes on cancelling while abandoned statements remain:
// with two abandoned on one connection, the first request stops the first
// statement, and the second, which starts after it, is stopped by the
// next, not left to sleep for an hour on a backend whose client has gone.
func TestPipelineCloseStopsEveryAbandonedStatement(t *testing.T) {
	p, running := closeTestPool(t, 2, nil)
	conn := oneSharedConn(t, p)
	ctx := pgtest.Ctx(t)

	qctx, cancel := context.WithCancel(ctx)
	errs := make(chan error, 2)
	for range 2 {
		go func() {
			// Unprepared, so that no preparation joins the two.
			_, err := p.Exec(qctx, "select pg_sleep($1::float8)", pgx.QueryExecModeExec, 3600)
			errs <- err
		}()
	}
	pgtest.WaitFor(t, 10*time.Second, "both statements at the server, the first running", func() bool {
		conn.mu.Lock()
		pending, queued := len(conn.pending), len(conn.queue)
		conn.mu.Unlock()
		return pending == 2 && queued == 0 && running("select pg_sleep") == 1
	})
	cancel()
	for range 2 {
		if err := <-errs; !errors.Is(err, context.Canceled) {
			t.Fatalf("an abandoned statement: %v, want context.Canceled", err)
		}
	}
	closedWithin(t, startClose(p), "Close waits for statements whose callers gave up")
	pgtest.WaitFor(t, 10*time.Second, "the server to stop both abandoned statements", func() bool { return running("select pg_sleep") == 0 })
}

// A statement that swallows cancel requests (PL/pgSQL catching
// query_canceled): Close waits CancelTimeout for the server to stop it,
// not for the statement, and then cuts the connection off, the statement
// still running.
func TestPipelineCloseCutsOffWhatIgnoresTheCancel(t *testing.T) {
	p, running := closeTestPool(t, 2, func(c *Config) { c.CancelTimeout = silentCancelTimeout })
	admin := pgtest.AdminConn(t)
	ctx := pgtest.Ctx(t)
	fn := fmt.Sprintf("shoal_ignore_cancel_%d", time.Now().UnixNano())
	if _, err := admin.Exec(ctx, "create function "+fn+"(secs float8) returns int language plpgsql as $$"+
		"DECLARE stop timestamptz := clock_timestamp() + make_interval(secs => secs);"+ignoreCancelsUntilStop+
		"RETURN 1; END $$"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _, _ = admin.Exec(context.Background(), "drop function if exists "+fn) })

	qctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 1)
	go func() {
		// A minute: far past the wait Close may give it.
		_, err := p.Exec(qctx, "select "+fn+"($1::float8)", pgx.QueryExecModeExec, 60)
		done <- err
	}()
	// Running, and in its loop's sleep, where a cancel is caught: one that
	// came before (while the function is compiled, on a loaded machine)
	// would stop it.
	pgtest.WaitFor(t, 10*time.Second, "the statement sleeping at the server", func() bool {
		var sleeping bool
		if err := admin.QueryRow(ctx, "select exists (select 1 from pg_stat_activity where starts_with(query, $1) and wait_event = 'PgSleep')", "select "+fn).Scan(&sleeping); err != nil {
			t.Fatal(err)
		}
		return sleeping && running("select "+fn) == 1
	})
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Fatalf("the abandoned statement: %v, want context.Canceled", err)
	}
	closedWithin(t, startClose(p), "Close waits for a statement that ignores the cancel requests")
	if n := running("select " + fn); n != 1 {
		t.Errorf("%d statements running once Close returned, want the one that ignores cancel requests: Close waited for it to end", n)
	}
}

// closeTestPool is a pipelined pool of maxConns for the close tests, its
// backends under a name of their own, so that no other run's statements
// are counted, with running, the count of statements starting with
// prefix that its backends run now. Whatever the test's outcome, its
// backends end with it: none is left sleeping for an hour.
func closeTestPool(t *testing.T, maxConns int32, mutate func(*Config)) (p *Pool, running func(prefix string) int) {
	t.Helper()
	app := fmt.Sprintf("shoalpgx-close-%d-%d", os.Getpid(), time.Now().UnixNano())
	p = newPipelinedPool(t, maxConns, 8, func(c *Config) {
		c.ConnConfig.RuntimeParams["application_name"] = app
		if mutate != nil {
			mutate(c)
		}
	})
	admin := pgtest.AdminConn(t)
	t.Cleanup(func() {
		_, _ = admin.Exec(context.Background(), "select pg_terminate_backend(pid) from pg_stat_activity where application_name = $1", app)
	})
	ctx := pgtest.Ctx(t)
	return p, func(prefix string) int {
		var n int
		if err := admin.QueryRow(ctx, "select count(*) from pg_stat_activity where application_name = $1 and state = 'active' and starts_with(query, $2)", app, prefix).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
}

// startClose closes p on a goroutine of its own and returns a channel
// closed when Close has returned.
func startClose(p *Pool) <-chan struct{} {
	closed := make(chan struct{})
	go func() {
		p.Close()
		close(closed)
	}()
	return closed
}

// closedWithin fails t with why unless closed is closed within hangLimit,
// far short of the hour a statement in these tests would run.
func closedWithin(t *testing.T, closed <-chan struct{}, why string) {
	t.Helper()
	select {
	case <-closed:
	case <-time.After(hangLimit):
		t.Fatal(why)
	}
}
