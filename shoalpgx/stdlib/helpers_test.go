package stdlib_test

import (
	"context"
	"database/sql"
	"testing"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
	"github.com/shoalpool/shoal/shoalpgx"
	"github.com/shoalpool/shoal/shoalpgx/stdlib"
)

// newTestPool opens a pool on the test server, closed at cleanup with a
// check for leaked goroutines.
func newTestPool(t testing.TB, mutate func(*shoalpgx.Config)) *shoalpgx.Pool {
	t.Helper()
	return pgtest.NewPool(t, shoalpgx.ParseConfig, shoalpgx.NewWithConfig, mutate)
}

// newTestDB opens a *sql.DB on p. At cleanup, before the pool closes, it
// closes the DB and checks that the DB left no lease out.
func newTestDB(t testing.TB, p *shoalpgx.Pool, opts ...stdlib.OptionOpenDB) *sql.DB {
	t.Helper()
	return pgtest.DB(t, stdlib.OpenDBFromPool(p, opts...), shoalStats(p))
}

// newTestSQLConn takes one connection of db for the test, given back when
// the test ends (before db closes).
func newTestSQLConn(t *testing.T, db *sql.DB) *sql.Conn {
	t.Helper()
	sc, err := db.Conn(pgtest.Ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = sc.Close() })
	return sc
}

// sqlBackendPID returns the server process behind a database/sql
// connection (a *sql.Conn), or behind the next one a *sql.DB takes.
func sqlBackendPID(t *testing.T, c interface {
	QueryRowContext(context.Context, string, ...any) *sql.Row
}) uint32 {
	t.Helper()
	var pid uint32
	if err := c.QueryRowContext(pgtest.Ctx(t), "select pg_backend_pid()").Scan(&pid); err != nil {
		t.Fatal(err)
	}
	return pid
}

// shoalStats is p's statistics as a function, for pgtest's helpers.
func shoalStats(p *shoalpgx.Pool) func() shoal.Stats {
	return func() shoal.Stats { return p.Stat().Shoal() }
}

// wantNoDriverStatements fails the test when the connection p hands out
// next still has statements the driver prepared (shoalpgx_sql_N).
func wantNoDriverStatements(t *testing.T, p *shoalpgx.Pool) {
	t.Helper()
	ctx := pgtest.Ctx(t)
	c, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	var n int
	if err := c.QueryRow(ctx, "select count(*) from pg_prepared_statements where name like 'shoalpgx_sql_%'").Scan(&n); err != nil || n != 0 {
		t.Fatalf("the pool's connection has %d of the driver's statements left (%v), want none", n, err)
	}
}
