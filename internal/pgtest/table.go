package pgtest

import (
	"context"
	"fmt"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
)

// CounterTable creates, through exec (a pool's own Exec, so that the pool
// counts the statements as it counts any), a table "name_pid" with one
// row, id 1 and n 0, for a test to lock and update; it drops the table
// when the test ends.
func CounterTable(t testing.TB, exec func(context.Context, string, ...any) (pgconn.CommandTag, error), name string) string {
	t.Helper()
	ctx := Ctx(t)
	table := fmt.Sprintf("%s_%d", name, os.Getpid())
	if _, err := exec(ctx, "create table "+table+" (id int primary key, n int)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		dctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, _ = exec(dctx, "drop table if exists "+table)
	})
	if _, err := exec(ctx, "insert into "+table+" values ($1, 0)", 1); err != nil {
		t.Fatal(err)
	}
	return table
}
