package shoalpgx

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// TestReadsRefuseReadWriteSpelledOtherwise guards the read pool's promise
// that it begins no read-write transaction, however it is asked for: a
// BeginQuery or a batch's BEGIN that says READ WRITE would override the
// sessions' default_transaction_read_only and write on the primary the
// read pool falls back to.
func TestReadsRefuseReadWriteSpelledOtherwise(t *testing.T) {
	pool := newTestPool(t, nil) // one server, a primary: the read pool falls back to it
	reads := pool.Reads()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()

	for _, q := range []string{"BEGIN READ WRITE", "begin isolation level serializable,  Read\tWrite", "START TRANSACTION READ WRITE"} {
		tx, err := reads.BeginTx(ctx, pgx.TxOptions{BeginQuery: q})
		if err == nil {
			_, werr := tx.Exec(ctx, "CREATE TEMP TABLE shoalpgx_reads_written (n int)")
			_ = tx.Rollback(ctx)
			t.Fatalf("BeginTx with BeginQuery %q on the read pool began a transaction (a write in it: %v), want errReadWriteTx", q, werr)
		}
		if !errors.Is(err, errReadWriteTx) {
			t.Fatalf("BeginTx with BeginQuery %q on the read pool: %v, want errReadWriteTx", q, err)
		}
	}

	var b pgx.Batch
	b.BeginTx(pgx.TxOptions{AccessMode: pgx.ReadWrite})
	b.Queue("CREATE TEMP TABLE shoalpgx_reads_written (n int)")
	br := reads.SendBatch(ctx, &b)
	_, begin := br.Exec()
	_, write := br.Exec()
	closeErr := br.Close()
	if tx := br.Tx(); tx != nil {
		_ = tx.Rollback(ctx)
	}
	if !errors.Is(begin, errReadWriteTx) || !errors.Is(closeErr, errReadWriteTx) {
		t.Fatalf("a batch beginning a read-write transaction on the read pool: BEGIN %v, write %v, Close %v; want errReadWriteTx", begin, write, closeErr)
	}

	// A read-only BEGIN of the caller's own still begins.
	tx, err := reads.BeginTx(ctx, pgx.TxOptions{BeginQuery: "BEGIN ISOLATION LEVEL REPEATABLE READ"})
	if err != nil {
		t.Fatalf("BeginTx with a BeginQuery that asks for no access mode: %v", err)
	}
	if err := tx.Rollback(ctx); err != nil {
		t.Fatal(err)
	}
}
