package shoalpgx

import (
	"context"
	"errors"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A savepoint of a pool transaction whose Rollback came with an ended
// context ends with it, as pgx's savepoints end with their transaction: its
// methods return pgx.ErrTxClosed at once, without touching the connection
// the pool is rolling back in the background and then hands to others.
func TestSavepointEndsWithATxRolledBackInTheBackground(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 1 })
	bg := pgtest.Ctx(t)
	ctx, cancel := context.WithCancel(bg)
	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	sp, err := tx.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	cancel()
	if err := tx.Rollback(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("Rollback with an ended context returned %v, want an error matching context.Canceled", err)
	}
	if _, err := sp.Exec(bg, "select 1"); !errors.Is(err, pgx.ErrTxClosed) {
		t.Errorf("Exec on the savepoint after its transaction's Rollback returned %v, want pgx.ErrTxClosed", err)
	}
	var n int
	if err := sp.QueryRow(bg, "select 1").Scan(&n); !errors.Is(err, pgx.ErrTxClosed) {
		t.Errorf("QueryRow on the savepoint returned %v, want pgx.ErrTxClosed", err)
	}
	if _, err := sp.Begin(bg); !errors.Is(err, pgx.ErrTxClosed) {
		t.Errorf("Begin on the savepoint returned %v, want pgx.ErrTxClosed", err)
	}
	if err := sp.Rollback(bg); !errors.Is(err, pgx.ErrTxClosed) {
		t.Errorf("Rollback of the savepoint returned %v, want pgx.ErrTxClosed", err)
	}
	if _, err := p.Exec(bg, "select 1"); err != nil {
		t.Fatalf("the pool after the transaction: %v", err)
	}
	if s := p.Stat(); s.NewConnsCount() != 1 {
		t.Errorf("%d connections opened, want 1: the transaction's connection was lost", s.NewConnsCount())
	}
}
