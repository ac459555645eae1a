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

// BlockedUpdates locks CounterTable's row through lock (an open
// transaction's Exec) and starts n updates of it through exec (a pool's
// Exec), each on a goroutine of its own: they wait on the lock, in flight
// on the pool's connections, until the transaction ends. Each update's
// error arrives on the channel returned.
func BlockedUpdates(t testing.TB, lock, exec func(context.Context, string, ...any) (pgconn.CommandTag, error), table string, n int) <-chan error {
	t.Helper()
	ctx := Ctx(t)
	if _, err := lock(ctx, "select * from "+table+" for update"); err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, n)
	for range n {
		go func() {
			_, err := exec(ctx, "update "+table+" set n = n + 1 where id = $1", 1)
			errs <- err
		}()
	}
	return errs
}
