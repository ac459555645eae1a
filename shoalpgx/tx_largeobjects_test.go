package shoalpgx

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// Large objects handed out before a pool transaction's Rollback came with an
// ended context, and the large object opened through them, end with it:
// their methods return pgx.ErrTxClosed, while the connection is being rolled
// back and after, and never reach it. A proxy holds whatever the connection
// sends after the Rollback, so that a call that did reach it would find it
// still busy. The large objects come from the transaction, or from a
// savepoint of it only, which the transaction's end must know of all the
// same.
func TestLargeObjectsEndWithATxEndedAfterItsContext(t *testing.T) {
	t.Run("from the transaction", func(t *testing.T) { testLargeObjectsEndWithTx(t, false) })
	t.Run("from a savepoint only", func(t *testing.T) { testLargeObjectsEndWithTx(t, true) })
}

func testLargeObjectsEndWithTx(t *testing.T, savepointOnly bool) {
	cfg, g := proxiedConfig(t, func(c *Config) { c.MaxConns = 1 })
	p := newPoolFor(t, cfg)
	t.Cleanup(closeProxy(g)) // before the pool's cleanup: see proxiedConfig
	bg := pgtest.Ctx(t)
	ctx, cancel := context.WithCancel(bg)
	defer cancel()
	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := tx.Begin(bg)
	if err != nil {
		t.Fatal(err)
	}
	spLO := sp.LargeObjects()
	lo := spLO
	if !savepointOnly {
		lo = tx.LargeObjects()
	}
	oid, err := lo.Create(bg, 0)
	if err != nil {
		t.Fatal(err)
	}
	obj, err := lo.Open(bg, oid, pgx.LargeObjectModeWrite)
	if err != nil {
		t.Fatal(err)
	}

	g.HoldOpen()
	cancel()
	if err := tx.Rollback(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Rollback with an ended context returned %v, want an error matching context.Canceled", err)
	}
	// Whatever the transaction's connection sends now waits at the proxy,
	// or the pool has it back already.
	pgtest.WaitFor(t, 10*time.Second, "the transaction's connection held at the proxy or given back", func() bool {
		return len(g.Held()) > 0 || p.Stat().Shoal().InUseConns == 0
	})
	check := func(when string) {
		t.Helper()
		if _, err := lo.Create(bg, 0); !errors.Is(err, pgx.ErrTxClosed) {
			t.Errorf("%s: Create on the transaction's large objects returned %v, want pgx.ErrTxClosed", when, err)
		}
		if _, err := obj.Write([]byte("x")); !errors.Is(err, pgx.ErrTxClosed) {
			t.Errorf("%s: Write on the large object opened in the transaction returned %v, want pgx.ErrTxClosed", when, err)
		}
		if err := spLO.Unlink(bg, oid); !errors.Is(err, pgx.ErrTxClosed) {
			t.Errorf("%s: Unlink on the savepoint's large objects returned %v, want pgx.ErrTxClosed", when, err)
		}
	}
	check("as the transaction ends")
	g.Release()
	pgtest.WaitFor(t, 10*time.Second, "the transaction's connection out of use", func() bool { return p.Stat().Shoal().InUseConns == 0 })
	check("after it ended")

	var n int
	if err := p.QueryRow(bg, "select count(*) from pg_largeobject_metadata where oid = $1", oid).Scan(&n); err != nil {
		t.Fatalf("the pool after the transaction: %v", err)
	}
	if n != 0 {
		t.Errorf("large object %d outlived the transaction that created it, which was rolled back", oid)
	}
}
