package stdlib_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
	"github.com/shoalpool/shoal/shoalpgx"
	"github.com/shoalpool/shoal/shoalpgx/stdlib"
)

// Every way of running a statement through database/sql, abandoned
// mid-flight, returns an error that matches the context's and holds the
// server's SQLSTATE 57014, and costs no connection: all run on the pool's
// one connection, which is the same backend at the end.
func TestCancelErrorsMatchTheContext(t *testing.T) {
	p := newTestPool(t, func(c *shoalpgx.Config) { c.MaxConns = 1 })
	db := stdlib.OpenDBFromPool(p)
	defer db.Close()
	before := sqlBackendPID(t, db) // the pool's one connection's
	admin := pgtest.AdminConn(t)
	const slow = "SELECT pg_sleep(10)"
	dials := p.Stat().Shoal().Dials

	sqlPaths := []struct {
		name string
		run  func(ctx context.Context) error
	}{
		{"sql.DB.ExecContext", func(ctx context.Context) error { _, err := db.ExecContext(ctx, slow); return err }},
		{"sql.DB.QueryContext", func(ctx context.Context) error {
			rows, err := db.QueryContext(ctx, slow)
			if err != nil {
				return err
			}
			defer rows.Close()
			for rows.Next() {
			}
			return rows.Err()
		}},
		{"sql.DB.QueryRowContext", func(ctx context.Context) error {
			var v any
			return db.QueryRowContext(ctx, slow).Scan(&v)
		}},
		{"sql.Tx.ExecContext", func(ctx context.Context) error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return fmt.Errorf("begin: %v", err)
			}
			defer tx.Rollback()
			_, err = tx.ExecContext(ctx, slow)
			return err
		}},
	}
	for _, path := range sqlPaths {
		// As in shoalpgx's own test: the last path's connection comes
		// back once its cancel is answered, in the background, and its
		// backend is out of pg_sleep only then.
		pgtest.WaitFor(t, 10*time.Second, "the connection back from the last abandoned statement", func() bool { return p.Stat().AcquiredConns() == 0 })
		ctx := pgtest.SleepingCtx(t, admin, before)
		pgtest.CheckCanceled(t, path.name, ctx, path.run(ctx))
	}
	after := sqlBackendPID(t, db)
	if err := db.Close(); err != nil {
		t.Fatal(err)
	}

	if got := p.Stat().Shoal().Dials; got != dials {
		t.Errorf("%d dials after abandoned statements, want none", got-dials)
	}
	if after != before {
		t.Errorf("the pool's backend was %d and is now %d: an abandoned statement cost the connection", before, after)
	}
}
