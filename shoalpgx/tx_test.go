package shoalpgx

import (
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// The pool's transactions are *Tx, as pgxpool's are *pgxpool.Tx, so that
// code asserting the type after a change of import path still compiles and
// holds.
func TestPoolTransactionsAreTx(t *testing.T) {
	p := newTestPool(t, func(c *Config) { c.MaxConns = 1 })
	ctx := pgtest.Ctx(t)
	tx, err := p.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	ptx, ok := tx.(*Tx)
	if !ok {
		t.Fatalf("Begin returned a %T, want a *Tx", tx)
	}
	if ptx.Conn() == nil {
		t.Error("Tx.Conn() is nil")
	}
	if err := ptx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}

	b := &pgx.Batch{}
	b.BeginTx(pgx.TxOptions{})
	b.Queue("select 1")
	br := p.SendBatch(ctx, b)
	btx := br.Tx()
	if err := br.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok := btx.(*Tx); !ok {
		t.Errorf("a batch's Tx is a %T, want a *Tx", btx)
	}
	if err := btx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
}
