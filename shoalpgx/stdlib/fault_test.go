package stdlib_test

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/internal/pgtest"
	"github.com/shoalpool/shoal/shoalpgx"
	"github.com/shoalpool/shoal/shoalpgx/stdlib"
)

// cancelWhenSleeping returns a function to call right before the statement
// to cancel: from then on it watches the server, and cancels once one of
// the test's backends is inside pg_sleep, so that the cancel lands while
// the statement executes, not before it, nor while pgx prepares or
// describes it (when a cancel would leave the connection clean, and kept).
func cancelWhenSleeping(t *testing.T, cancel context.CancelFunc) (start func()) {
	admin := pgtest.AdminConn(t)
	ctx := pgtest.Ctx(t)
	app := pgtest.AppName(t)
	return func() {
		go func() {
			defer cancel()
			for ctx.Err() == nil {
				var n int
				err := admin.QueryRow(ctx, "select count(*) from pg_stat_activity where application_name = $1 and wait_event = 'PgSleep'", app).Scan(&n)
				if err != nil || n > 0 {
					return
				}
				time.Sleep(2 * time.Millisecond)
			}
		}()
	}
}

// A query whose context is canceled while it runs returns with the
// context's error, and the server's (SQLSTATE 57014): the pool has the
// server cancel the statement, and the connection stays for the next
// query, through either API.
func TestSQLContextCanceledMidQuery(t *testing.T) {
	const sleep = "select pg_sleep(60)"
	for _, tc := range []struct {
		name string
		run  func(ctx context.Context, db *sql.DB, start func()) error
	}{
		{"exec", func(ctx context.Context, db *sql.DB, start func()) error {
			start()
			_, err := db.ExecContext(ctx, sleep)
			return err
		}},
		{"query", func(ctx context.Context, db *sql.DB, start func()) error {
			start()
			rows, err := db.QueryContext(ctx, sleep)
			if err == nil {
				rows.Close()
			}
			return err
		}},
		{"prepared", func(ctx context.Context, db *sql.DB, start func()) error {
			sc, err := db.Conn(ctx)
			if err != nil {
				return err
			}
			defer sc.Close()
			stmt, err := sc.PrepareContext(ctx, sleep)
			if err != nil {
				return err
			}
			defer stmt.Close()
			start()
			_, err = stmt.ExecContext(ctx)
			return err
		}},
		{"transaction", func(ctx context.Context, db *sql.DB, start func()) error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			start()
			_, err = tx.ExecContext(ctx, sleep)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPool(t, func(c *shoalpgx.Config) { c.MaxConns = 1 })
			db := newTestDB(t, p)
			ctx, cancel := context.WithCancel(pgtest.Ctx(t))
			defer cancel()
			start := cancelWhenSleeping(t, cancel)
			err := tc.run(ctx, db, start)
			var pe *pgconn.PgError
			if !errors.Is(err, context.Canceled) || !errors.As(err, &pe) || pe.Code != "57014" {
				t.Fatalf("query canceled mid-flight: %v, want context.Canceled and SQLSTATE 57014", err)
			}
			// A transaction's connection is released by database/sql's own
			// goroutine when the context ends, after its rollback.
			pgtest.WaitFor(t, 10*time.Second, "the canceled query's connection released", func() bool {
				return p.Stat().Shoal().InUseConns == 0
			})
			if s := p.Stat().Shoal(); s.Closed != 0 || s.Dials != 1 {
				t.Fatalf("stats %+v: want the canceled query's connection kept", s)
			}
			var n int
			if err := db.QueryRowContext(pgtest.Ctx(t), "select 7").Scan(&n); err != nil || n != 7 {
				t.Fatalf("next database/sql query: %d, %v", n, err)
			}
			if err := p.QueryRow(pgtest.Ctx(t), "select 8").Scan(&n); err != nil || n != 8 {
				t.Fatalf("next pgx query: %d, %v", n, err)
			}
		})
	}
}

// A context that has ended before the call fails it with the context's
// error and costs no connection.
func TestSQLContextEndedBeforeTheCall(t *testing.T) {
	p := newTestPool(t, func(c *shoalpgx.Config) { c.MaxConns = 1 })
	db := newTestDB(t, p)
	sc, err := db.Conn(pgtest.Ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(pgtest.Ctx(t))
	cancel()
	if _, err := sc.ExecContext(ctx, "select 1"); !errors.Is(err, context.Canceled) {
		t.Fatalf("exec with an ended context: %v, want context.Canceled", err)
	}
	if err := sc.Close(); err != nil {
		t.Fatal(err)
	}
	if s := p.Stat().Shoal(); s.Closed != 0 || s.IdleConns != 1 {
		t.Fatalf("stats %+v: want the connection kept", s)
	}
}

// terminateBackend has the server terminate pid and waits until the
// backend is gone and its goodbye has had time to reach the client.
func terminateBackend(t *testing.T, pid uint32) {
	t.Helper()
	admin := pgtest.AdminConn(t)
	ctx := pgtest.Ctx(t)
	var ok bool
	if err := admin.QueryRow(ctx, "select pg_terminate_backend($1)", pid).Scan(&ok); err != nil || !ok {
		t.Fatalf("pg_terminate_backend(%d): %v, %v", pid, ok, err)
	}
	pgtest.WaitFor(t, 10*time.Second, "the terminated backend to go", func() bool {
		var n int
		if err := admin.QueryRow(ctx, "select count(*) from pg_stat_activity where pid = $1", pid).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n == 0
	})
	time.Sleep(10 * time.Millisecond) // its goodbye reaches our socket, and peekAfter passes
}

// A connection the server terminated is never handed out again by
// database/sql, wherever it was when it died: idle in the pool (the pool's
// acquire replaces it), held by database/sql (its next use fails, and it is
// closed, not given back), or idle in database/sql after SetMaxIdleConns
// (ResetSession's look at the socket finds it dead before the query).
func TestSQLTerminatedConnectionIsNotReused(t *testing.T) {
	pool := func(t *testing.T) *shoalpgx.Pool {
		return newTestPool(t, func(c *shoalpgx.Config) {
			c.MaxConns = 2
			c.HealthCheckAfter = time.Hour // no ping for idleness: only the look at the socket
		})
	}
	nextPID := func(t *testing.T, db *sql.DB) uint32 {
		t.Helper()
		var pid uint32
		if err := db.QueryRowContext(pgtest.Ctx(t), "select pg_backend_pid()").Scan(&pid); err != nil {
			t.Fatalf("first query after the termination: %v", err)
		}
		return pid
	}

	t.Run("idle in the pool", func(t *testing.T) {
		p := pool(t)
		db := newTestDB(t, p)
		old := nextPID(t, db)
		terminateBackend(t, old)
		if pid := nextPID(t, db); pid == old {
			t.Fatalf("database/sql was handed the terminated backend %d", pid)
		}
	})

	t.Run("held by database/sql", func(t *testing.T) {
		p := pool(t)
		db := newTestDB(t, p)
		ctx := pgtest.Ctx(t)
		sc, err := db.Conn(ctx)
		if err != nil {
			t.Fatal(err)
		}
		old := sqlBackendPID(t, sc)
		terminateBackend(t, old)
		if err := sc.PingContext(ctx); !errors.Is(err, driver.ErrBadConn) {
			t.Fatalf("ping on a terminated backend: %v, want driver.ErrBadConn", err)
		}
		// database/sql closed the sql.Conn itself on driver.ErrBadConn.
		if err := sc.Close(); !errors.Is(err, sql.ErrConnDone) {
			t.Fatalf("closing the sql.Conn after its connection went bad: %v, want sql.ErrConnDone", err)
		}
		pgtest.Settle(t, shoalStats(p))
		if s := p.Stat().Shoal(); s.Closed != 1 || s.TotalConns != 0 {
			t.Fatalf("stats %+v: want the terminated connection closed", s)
		}
		if err := db.PingContext(ctx); err != nil {
			t.Fatalf("DB ping after the termination: %v", err)
		}
		if pid := nextPID(t, db); pid == old {
			t.Fatalf("database/sql was handed the terminated backend %d", pid)
		}
	})

	t.Run("idle in database/sql", func(t *testing.T) {
		p := pool(t)
		db := newTestDB(t, p)
		db.SetMaxIdleConns(1)
		old := nextPID(t, db)
		if s := db.Stats(); s.Idle != 1 {
			t.Fatalf("db.Stats %+v: want the connection idle in database/sql", s)
		}
		terminateBackend(t, old)
		if pid := nextPID(t, db); pid == old {
			t.Fatalf("database/sql reused the terminated backend %d", pid)
		}
		pgtest.Settle(t, shoalStats(p))
		if s := p.Stat().Shoal(); s.Closed != 1 {
			t.Fatalf("stats %+v: want the terminated connection closed", s)
		}
		// The pool did not get it back as a good one.
		c, err := p.Acquire(pgtest.Ctx(t))
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		if pid := c.Conn().PgConn().PID(); pid == old {
			t.Fatalf("the pool handed out the terminated backend %d", pid)
		}
	})
}

// The OptionResetSession function runs before database/sql reuses a
// connection it holds, with the pgx connection; an error discards the
// connection (closed, not given back to the pool) and database/sql takes
// another.
func TestOptionResetSession(t *testing.T) {
	p := newTestPool(t, func(c *shoalpgx.Config) { c.MaxConns = 2 })
	calls := 0
	var seen *pgx.Conn
	db := newTestDB(t, p, stdlib.OptionResetSession(func(ctx context.Context, conn *pgx.Conn) error {
		calls++
		seen = conn
		if calls == 2 {
			return errors.New("refused by the test")
		}
		return nil
	}))
	db.SetMaxIdleConns(1)
	db.SetMaxOpenConns(1) // one connection at a time: each query reuses the idle one
	ctx := pgtest.Ctx(t)
	pids := make([]uint32, 3)
	for i := range pids {
		if err := db.QueryRowContext(ctx, "select pg_backend_pid()").Scan(&pids[i]); err != nil {
			t.Fatalf("query %d: %v", i+1, err)
		}
	}
	if calls != 2 || seen == nil {
		t.Fatalf("reset called %d times (conn %v), want 2: before the second and the third query", calls, seen)
	}
	if pids[1] != pids[0] || pids[2] == pids[0] {
		t.Fatalf("backends %v: want the first reused once, then replaced after the refused reset", pids)
	}
	pgtest.Settle(t, shoalStats(p))
	if s := p.Stat().Shoal(); s.Closed != 1 {
		t.Fatalf("stats %+v: want the refused connection closed, not given back", s)
	}
}
