package pgtest

import (
	"testing"

	"github.com/jackc/pgx/v5"
)

// RequireClean fails unless conn, just handed out by a pool, is idle,
// outside a transaction, and answers.
func RequireClean(t testing.TB, conn *pgx.Conn) {
	t.Helper()
	pg := conn.PgConn()
	if conn.IsClosed() || pg.IsBusy() || pg.TxStatus() != 'I' {
		t.Fatalf("handed out unclean: closed %v busy %v tx status %q", conn.IsClosed(), pg.IsBusy(), pg.TxStatus())
	}
	var one int
	if err := conn.QueryRow(Ctx(t), "select 1").Scan(&one); err != nil {
		t.Fatalf("handed-out connection does not work: %v", err)
	}
}
