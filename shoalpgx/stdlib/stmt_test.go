package stdlib_test

import (
	"database/sql"
	"strings"
	"testing"

	"github.com/shoalpool/shoal/internal/pgtest"
	"github.com/shoalpool/shoal/shoalpgx"
)

// preparedOnServer lists the statements this driver prepared on sc's
// session, from the server's own view.
func preparedOnServer(t *testing.T, sc *sql.Conn) []string {
	t.Helper()
	rows, err := sc.QueryContext(pgtest.Ctx(t), "select statement from pg_prepared_statements where name like 'shoalpgx_sql_%' order by prepare_time, statement")
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var stmts []string
	for rows.Next() {
		var s string
		if err := rows.Scan(&s); err != nil {
			t.Fatal(err)
		}
		stmts = append(stmts, s)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return stmts
}

// A statement prepared through database/sql is prepared at the server,
// runs with different arguments, checks their number, is independent of
// another statement with the same text, and is deallocated by Close.
func TestSQLPreparedStatements(t *testing.T) {
	p := newTestPool(t, nil)
	db := newTestDB(t, p)
	ctx := pgtest.Ctx(t)
	sc := newTestSQLConn(t, db)

	const query = "select $1::int * $2::int"
	s1, err := sc.PrepareContext(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	s2, err := sc.PrepareContext(ctx, query)
	if err != nil {
		t.Fatal(err)
	}
	if got := preparedOnServer(t, sc); len(got) != 2 || got[0] != query || got[1] != query {
		t.Fatalf("prepared at the server: %q, want the query twice", got)
	}
	for i := 1; i <= 3; i++ {
		var n int
		if err := s1.QueryRowContext(ctx, i, 10).Scan(&n); err != nil || n != i*10 {
			t.Fatalf("run %d: %d, %v", i, n, err)
		}
	}
	if _, err := s1.ExecContext(ctx, 1); err == nil || !strings.Contains(err.Error(), "expected 2 arguments") {
		t.Fatalf("one argument for two parameters: %v, want database/sql's count error", err)
	}

	if err := s1.Close(); err != nil {
		t.Fatal(err)
	}
	if got := preparedOnServer(t, sc); len(got) != 1 {
		t.Fatalf("after closing one of two: %q prepared, want one", got)
	}
	var n int
	if err := s2.QueryRowContext(ctx, 6, 7).Scan(&n); err != nil || n != 42 {
		t.Fatalf("the other statement after the first closed: %d, %v", n, err)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
	if got := preparedOnServer(t, sc); len(got) != 0 {
		t.Fatalf("after closing both: %q still prepared", got)
	}
	if _, err := sc.PrepareContext(ctx, "select from nowhere_at_all"); err == nil || !strings.Contains(err.Error(), "nowhere_at_all") {
		t.Fatalf("preparing a bad statement: %v, want the server's error", err)
	}
}

// A statement prepared on the DB is prepared on each connection it runs
// on, and every one is deallocated when database/sql closes the
// connection, so that the pool gets its connections back clean.
func TestSQLDBPreparedStatementLeavesNothingBehind(t *testing.T) {
	p := newTestPool(t, func(c *shoalpgx.Config) { c.MaxConns = 1 })
	db := newTestDB(t, p)
	ctx := pgtest.Ctx(t)
	stmt, err := db.PrepareContext(ctx, "select $1::text")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"a", "b"} {
		var got string
		if err := stmt.QueryRowContext(ctx, want).Scan(&got); err != nil || got != want {
			t.Fatalf("%q, %v; want %q", got, err, want)
		}
	}
	if err := stmt.Close(); err != nil {
		t.Fatal(err)
	}
	wantNoDriverStatements(t, p)
	if s := p.Stat().Shoal(); s.Dials != 1 {
		t.Fatalf("%d dials: the connection should have been reused, not replaced", s.Dials)
	}
}
