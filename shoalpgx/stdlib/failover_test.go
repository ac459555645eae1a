package stdlib_test

import (
	"context"
	"database/sql"
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/internal/pgpair"
	"github.com/shoalpool/shoal/internal/pgtest"
	"github.com/shoalpool/shoal/shoalpgx"
)

// A primary fenced read-only while the pool holds idle connections to it,
// its standby promoted: the first write through database/sql fails with
// read_only_sql_transaction, and, as for a write through the pool's own
// API, the pool resets, so that database/sql's next writes reach the new
// primary instead of failing on each of the pool's other connections to
// the old one. Inside a transaction the pool looks once the connection is
// back, after the rollback.
func TestSQLFailoverReadOnlyResets(t *testing.T) {
	const insert = "INSERT INTO shoalpgx_failover VALUES (1)"
	for _, tc := range []struct {
		name  string
		write func(ctx context.Context, db *sql.DB) error
	}{
		{"outside a transaction", func(ctx context.Context, db *sql.DB) error {
			_, err := db.ExecContext(ctx, insert)
			return err
		}},
		{"a query", func(ctx context.Context, db *sql.DB) error {
			var n int
			return db.QueryRowContext(ctx, insert+" RETURNING n").Scan(&n)
		}},
		{"inside a transaction", func(ctx context.Context, db *sql.DB) error {
			tx, err := db.BeginTx(ctx, nil)
			if err != nil {
				return err
			}
			defer tx.Rollback()
			_, err = tx.ExecContext(ctx, insert)
			return err
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			pair := pgpair.ForTest(t)
			ctx := context.Background()
			cfg, err := shoalpgx.ParseConfig(pair.HA)
			if err != nil {
				t.Fatal(err)
			}
			cfg.MaxConns = 4
			cfg.RoleCheckPeriod = 0 // no role check: this test is of the reset on a refused write
			p := pgtest.Open(t, shoalpgx.NewWithConfig, cfg)
			db := newTestDB(t, p)
			if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS shoalpgx_failover (n integer)"); err != nil {
				t.Fatal(err)
			}
			// Open all four, on the primary, and leave them idle in the pool.
			pgtest.OpenIdle(t, p.Acquire, 4)

			if err := pair.FenceAndPromote(ctx); err != nil {
				t.Fatal(err)
			}
			wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			pgpair.WantFencedWrite(t, tc.write(wctx, db))
			// The reset closes the four connections to the old primary.
			pgtest.WaitFor(t, 5*time.Second, "the pool's reset after the refused write", func() bool {
				return p.Stat().Shoal().Closed >= 4
			})
			pair.WantWritesOnStandby(t, "shoalpgx_failover", func(sql string, arg int, port *int) error {
				return db.QueryRowContext(wctx, sql, arg).Scan(port)
			})
		})
	}
}

// A write refused inside a transaction on a fenced primary, its standby
// promoted: the pool asks the server only once the connection is back,
// after the rollback, so database/sql must give it back rather than hand
// it straight to a caller waiting for it (SetMaxOpenConns), whose write
// would fail on the old primary in turn, as every write would for as long
// as callers keep waiting.
func TestSQLFailoverRefusedInATransactionGoesBackToThePool(t *testing.T) {
	pair := pgpair.ForTest(t)
	ctx := context.Background()
	cfg, err := shoalpgx.ParseConfig(pair.HA)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	cfg.RoleCheckPeriod = 0 // no role check: this test is of the refused write
	p := pgtest.Open(t, shoalpgx.NewWithConfig, cfg)
	db := newTestDB(t, p)
	db.SetMaxOpenConns(1)
	if _, err := db.ExecContext(ctx, "CREATE TABLE IF NOT EXISTS shoalpgx_failover (n integer)"); err != nil {
		t.Fatal(err)
	}
	if err := pair.SetReadOnly(ctx, pair.Primary, true); err != nil {
		t.Fatal(err)
	}
	if err := pair.Promote(ctx, pair.Standby); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	tx, err := db.BeginTx(wctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.ExecContext(wctx, "INSERT INTO shoalpgx_failover VALUES (1)")
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "25006" {
		t.Fatalf("the first write after the fence: %v, want SQLSTATE 25006", err)
	}
	type result struct {
		port int
		err  error
	}
	got := make(chan result, 1)
	go func() {
		var r result
		r.err = db.QueryRowContext(wctx, "INSERT INTO shoalpgx_failover VALUES (2) RETURNING inet_server_port()").Scan(&r.port)
		got <- r
	}()
	pgtest.WaitFor(t, 5*time.Second, "the second writer to wait for the connection", func() bool { return db.Stats().WaitCount == 1 })
	if err := tx.Rollback(); err != nil {
		t.Fatal(err)
	}
	r := <-got
	if r.err != nil {
		t.Fatalf("the write waiting for the refused one's connection: %v", r.err)
	}
	if strconv.Itoa(r.port) != pair.Standby.Port {
		t.Fatalf("the second write went to port %d, want the new primary's %s", r.port, pair.Standby.Port)
	}
}
