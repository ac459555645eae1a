package stdlib_test

import (
	"context"
	"database/sql"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
	"github.com/shoalpool/shoal/shoalpgx"
)

// A connection database/sql holds when the pool resets (Pool.Reset, or a
// failover's reset) serves no other of database/sql's callers: the reset
// is there to end every session on the old server, and under load, with
// SetMaxOpenConns, database/sql passes a connection from caller to caller
// without ever giving it back to the pool. The next caller runs on a new
// connection and the old one is closed.
func TestSQLConnHeldAcrossAResetIsNotReused(t *testing.T) {
	for _, tc := range []struct {
		name string
		// next runs the statement after the reset, with the pool reset
		// while the DB held old's connection, and returns its backend.
		run func(t *testing.T, ctx context.Context, p *shoalpgx.Pool, db *sql.DB) (old, next uint32)
	}{
		{"handed to a waiting caller", func(t *testing.T, ctx context.Context, p *shoalpgx.Pool, db *sql.DB) (uint32, uint32) {
			db.SetMaxOpenConns(1)
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			old := sqlBackendPID(t, tx)
			got := make(chan uint32, 1)
			go func() {
				var pid uint32
				_ = db.QueryRowContext(ctx, "select pg_backend_pid()").Scan(&pid)
				got <- pid
			}()
			pgtest.WaitFor(t, 5*time.Second, "the second caller to wait for the connection", func() bool { return db.Stats().WaitCount == 1 })
			p.Reset()
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			return old, <-got
		}},
		{"given back to database/sql's idle set", func(t *testing.T, ctx context.Context, p *shoalpgx.Pool, db *sql.DB) (uint32, uint32) {
			db.SetMaxIdleConns(1)
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				t.Fatal(err)
			}
			old := sqlBackendPID(t, tx)
			p.Reset()
			if err := tx.Commit(); err != nil {
				t.Fatal(err)
			}
			return old, sqlBackendPID(t, db)
		}},
		{"idle in database/sql", func(t *testing.T, ctx context.Context, p *shoalpgx.Pool, db *sql.DB) (uint32, uint32) {
			db.SetMaxIdleConns(1)
			old := sqlBackendPID(t, db)
			if s := db.Stats(); s.Idle != 1 {
				t.Fatalf("db.Stats %+v: want the connection idle in database/sql", s)
			}
			p.Reset()
			return old, sqlBackendPID(t, db)
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPool(t, func(c *shoalpgx.Config) { c.MaxConns = 2 })
			db := newTestDB(t, p)
			old, next := tc.run(t, pgtest.Ctx(t), p, db)
			if next == old {
				t.Fatalf("database/sql reused backend %d, which it held when the pool reset", next)
			}
			pgtest.Settle(t, shoalStats(p))
			if s := p.Stat().Shoal(); s.Closed != 1 {
				t.Fatalf("stats %+v: want the connection held across the reset closed", s)
			}
		})
	}
}
