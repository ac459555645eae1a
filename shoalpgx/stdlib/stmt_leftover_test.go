package stdlib_test

import (
	"testing"

	"github.com/shoalpool/shoal/internal/pgtest"
	"github.com/shoalpool/shoal/shoalpgx"
)

// A statement prepared on a sql.Conn and left open when the sql.Conn is
// closed is deallocated before the pool gets the connection back, since
// database/sql does not close such statements itself.
func TestSQLConnStatementLeftOpenIsDeallocated(t *testing.T) {
	p := newTestPool(t, func(c *shoalpgx.Config) { c.MaxConns = 1 })
	db := newTestDB(t, p)
	ctx := pgtest.Ctx(t)
	sc, err := db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	stmt, err := sc.PrepareContext(ctx, "select $1::text")
	if err != nil {
		t.Fatal(err)
	}
	var got string
	if err := stmt.QueryRowContext(ctx, "a").Scan(&got); err != nil || got != "a" {
		t.Fatalf("%q, %v; want \"a\"", got, err)
	}
	if err := sc.Close(); err != nil { // stmt deliberately left open
		t.Fatal(err)
	}
	wantNoDriverStatements(t, p)
	_ = stmt.Close()
}
