package shoalpgx

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// SendBatch acquires a connection and sends b on it. The connection is held
// until the returned results are closed, or, when the batch began a
// transaction (pgx.Batch.BeginTx), until that transaction, returned by the
// results' Tx method, commits or rolls back. A failed acquire shows as the
// results' errors. See pgx.Conn.SendBatch.
func (p *Pool) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	pc, err := p.acquire(ctx)
	if err != nil {
		return pgx.FailedBatchResults(b, err)
	}
	br := pc.conn.SendBatch(ctx, b)
	if tx := br.Tx(); tx != nil {
		return &poolBatchResults{br: br, tx: &Tx{t: tx, pc: pc}}
	}
	return &poolBatchResults{br: br, pc: pc}
}

// poolBatchResults are the results of Pool.SendBatch and the connection
// they hold.
type poolBatchResults struct {
	br pgx.BatchResults
	pc *pooledConn // nil once released, or when tx holds the connection
	tx *Tx         // the transaction the batch began, which owns the connection
}

// Exec reads the next result as pgx.BatchResults.Exec does.
func (br *poolBatchResults) Exec() (pgconn.CommandTag, error) { return br.br.Exec() }

// Query reads the next result as pgx.BatchResults.Query does.
func (br *poolBatchResults) Query() (pgx.Rows, error) { return br.br.Query() }

// QueryRow reads the next result as pgx.BatchResults.QueryRow does.
func (br *poolBatchResults) QueryRow() pgx.Row { return br.br.QueryRow() }

// Close reads what is left of the batch and releases the connection, unless
// the batch began a transaction, which then holds it. When the transaction
// never began (its BEGIN failed, or the connection broke first), there is
// nothing for Commit or Rollback to end, so the connection is released here
// too, and a caller that returns on Close's error loses nothing. Calling it
// again returns the same error and does nothing more.
func (br *poolBatchResults) Close() error {
	err := br.br.Close()
	if pc := br.pc; pc != nil {
		br.pc = nil
		pc.release()
	}
	if tx := br.tx; tx != nil && tx.pc != nil && !tx.pc.inTransaction() {
		tx.releaseConn()
	}
	return err
}

// Tx returns the transaction the batch began, or nil.
func (br *poolBatchResults) Tx() pgx.Tx {
	if br.tx == nil {
		return nil
	}
	return br.tx
}
