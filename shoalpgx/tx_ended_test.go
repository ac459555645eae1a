package shoalpgx

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// A pool transaction whose Commit or Rollback comes with a context that
// has already ended fails as pgx's does and is rolled back in the
// background, on a connection the pool keeps: its writes never reach the
// table, a Commit's included, which would otherwise be a write reported
// as failed that the server kept.
func TestTxEndedWithAnEndedContextIsRolledBack(t *testing.T) {
	for _, end := range []string{"Commit", "Rollback"} {
		t.Run(end, func(t *testing.T) {
			p := newTestPool(t, func(c *Config) { c.MaxConns = 1 })
			table := pipeTable(t, "shoalpgx_txended", "n int")
			bg := pgtest.Ctx(t)
			ctx, cancel := context.WithCancel(bg)
			tx, err := p.Begin(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if _, err := tx.Exec(ctx, "INSERT INTO "+table+" VALUES (1)"); err != nil {
				t.Fatal(err)
			}
			cancel()
			endTx := tx.Commit
			if end == "Rollback" {
				endTx = tx.Rollback
			}
			if err := endTx(ctx); !errors.Is(err, context.Canceled) {
				t.Fatalf("%s with an ended context returned %v, want an error matching context.Canceled", end, err)
			}
			pgtest.WaitFor(t, 10*time.Second, "the connection back from the background rollback", func() bool { return p.Stat().AcquiredConns() == 0 })
			var n int
			if err := pgtest.AdminConn(t).QueryRow(bg, "SELECT count(*) FROM "+table).Scan(&n); err != nil {
				t.Fatal(err)
			}
			if n != 0 {
				t.Errorf("%d rows in the table after a %s with an ended context, want none: it was not rolled back", n, end)
			}
			c, err := p.Acquire(bg)
			if err != nil {
				t.Fatal(err)
			}
			if st := c.Conn().PgConn().TxStatus(); st != 'I' {
				t.Errorf("the connection handed out next is in transaction status %q, want idle", st)
			}
			c.Release()
			if s := p.Stat(); s.NewConnsCount() != 1 {
				t.Errorf("%d connections opened, want 1: the transaction's connection was lost", s.NewConnsCount())
			}
		})
	}
}
