package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// These tests release connections in states the next holder must never
// see, on a pool of one connection, and check what the next acquire gets:
// the same backend, reset, or a new one.

// acquireOne acquires the pool's connection and returns it with its backend.
func acquireOne(t *testing.T, p *Pool) (*Conn, uint32) {
	t.Helper()
	c, err := p.Acquire(pgtest.Ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	return c, backendPID(t, c)
}

// requireNewBackend acquires p's next connection and checks that its
// session is clean and that it is not backend pid, which the pool should
// have closed after what happened to it.
func requireNewBackend(t *testing.T, p *Pool, pid uint32, after string) {
	t.Helper()
	c, got := acquireOne(t, p)
	defer c.Release()
	pgtest.RequireClean(t, c.Conn())
	if got == pid {
		t.Fatalf("backend %d handed out again after %s", pid, after)
	}
}

// TestReleaseInsideTransactionIsDiscarded: a connection its holder releases
// inside a transaction (open or failed) is closed, as pgxpool does, and the
// next holder gets a clean session on another backend.
func TestReleaseInsideTransactionIsDiscarded(t *testing.T) {
	for _, state := range []string{"open", "failed"} {
		t.Run(state, func(t *testing.T) {
			p := newTestPool(t, func(c *Config) { c.MaxConns = 1 })
			ctx := pgtest.Ctx(t)
			c, pid := acquireOne(t, p)
			if _, err := c.Exec(ctx, "begin"); err != nil {
				t.Fatal(err)
			}
			want := byte('T')
			if state == "failed" {
				if _, err := c.Exec(ctx, "select 1/0"); err == nil {
					t.Fatal("1/0 succeeded")
				}
				want = 'E'
			}
			if got := c.Conn().PgConn().TxStatus(); got != want {
				t.Fatalf("tx status %q, want %q", got, want)
			}
			c.Release()

			requireNewBackend(t, p, pid, "a release inside a transaction")
		})
	}
}

// TestStaleTxCannotTouchTheNextHolder: a Tx from Conn.Begin used after its
// Conn was released (deferred Rollback after a deferred Release) fails,
// instead of ending the next holder's transaction: the next holder's
// commit keeps its row.
func TestStaleTxCannotTouchTheNextHolder(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 1 })
	ctx := pgtest.Ctx(t)
	table := fmt.Sprintf("shoalpgx_stale_tx_%d", time.Now().UnixNano())
	if _, err := p.Exec(ctx, "create table "+table+" (x int)"); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Exec(context.Background(), "drop table if exists "+table) })

	c, _ := acquireOne(t, p)
	stale, err := c.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c.Release()

	c2, _ := acquireOne(t, p)
	tx, err := c2.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tx.Exec(ctx, "insert into "+table+" values (1)"); err != nil {
		t.Fatal(err)
	}
	if err := stale.Rollback(ctx); err == nil {
		t.Error("a Rollback on a released connection's Tx succeeded")
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatalf("the next holder's commit: %v", err)
	}
	c2.Release()
	var n int
	if err := p.QueryRow(ctx, "select count(*) from "+table).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 1 {
		t.Fatalf("%d rows committed, want 1: the stale Tx ended the next holder's transaction", n)
	}
}

func TestReleaseWithUnreadRowsIsDiscarded(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 1 })
	ctx := pgtest.Ctx(t)
	c, pid := acquireOne(t, p)
	rows, err := c.Query(ctx, "select generate_series(1, 100000)")
	if err != nil {
		t.Fatal(err)
	}
	if !rows.Next() {
		t.Fatal(rows.Err())
	}
	closedBefore := p.Stat().Shoal().Closed
	c.Release() // rows still open: the connection is busy

	requireNewBackend(t, p, pid, "a release with unread rows")
	pgtest.Settle(t, shoalStats(p))
	if p.Stat().Shoal().Closed != closedBefore+1 {
		t.Fatalf("Closed = %d, want %d", p.Stat().Shoal().Closed, closedBefore+1)
	}
}

func TestReleaseWithUnclosedBatchIsDiscarded(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 1 })
	ctx := pgtest.Ctx(t)
	c, pid := acquireOne(t, p)
	b := newBatch("select 1", "select 2", "select 3")
	br := c.SendBatch(ctx, b)
	if _, err := br.Exec(); err != nil {
		t.Fatal(err)
	}
	c.Release()

	requireNewBackend(t, p, pid, "a release with an unclosed batch")
}

// With CancelTimeout 0 pgx closes a connection whose statement's context
// ends (its default), and such a connection is never handed out again.
// (The pool's own handler keeps it: cancel_test.go.)
func TestReleaseAfterCanceledQueryIsDiscarded(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns, c.CancelTimeout = 1, 0 })
	c, pid := acquireOne(t, p)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Exec(ctx, "select pg_sleep(10)")
	if err == nil {
		t.Fatal("pg_sleep(10) finished within 50ms")
	}
	c.Release()

	requireNewBackend(t, p, pid, "its query was canceled mid-flight")
}

func TestReleaseAfterServerKilledItIsDiscarded(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 1 })
	admin := pgtest.AdminConn(t)
	ctx := pgtest.Ctx(t)
	c, pid := acquireOne(t, p)
	if _, err := admin.Exec(ctx, "select pg_terminate_backend($1)", pid); err != nil {
		t.Fatal(err)
	}
	if err := c.Ping(ctx); err == nil {
		t.Fatal("ping on a terminated backend succeeded")
	}
	c.Release()

	requireNewBackend(t, p, pid, "the server terminated it")
}

func TestPoolQueryRowsClosedEarlyKeepTheConnection(t *testing.T) {
	// Pool.Query's rows, closed before the end, drain the result: the
	// connection is clean and kept.
	p := newTestPool(t, func(c *Config) { c.MaxConns = 1 })
	ctx := pgtest.Ctx(t)
	c, pid := acquireOne(t, p)
	c.Release()
	rows, err := p.Query(ctx, "select generate_series(1, 1000)")
	if err != nil {
		t.Fatal(err)
	}
	rows.Next()
	rows.Close()
	c2, pid2 := acquireOne(t, p)
	defer c2.Release()
	pgtest.RequireClean(t, c2.Conn())
	if pid2 != pid {
		t.Fatalf("backend %d after rows.Close, want the same %d", pid2, pid)
	}
}

func TestPoolBeginWithoutEndKeepsItsConnectionUntilRollback(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 1 })
	ctx := pgtest.Ctx(t)
	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if _, err := p.Acquire(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire while the only connection is in a transaction: %v, want deadline exceeded", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
	c, _ := acquireOne(t, p)
	defer c.Release()
	pgtest.RequireClean(t, c.Conn())
}
