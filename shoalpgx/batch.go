package shoalpgx

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/shoalpgx/internal/ctxerr"
)

// SendBatch acquires a connection and sends b on it. The connection is held
// until the returned results are closed, or, when the batch began a
// transaction (pgx.Batch.BeginTx), until that transaction, returned by the
// results' Tx method, commits or rolls back. A failed acquire shows as the
// results' errors. See pgx.Conn.SendBatch.
func (p *Pool) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if p.pipe != nil {
		if br, ok := p.pipeSendBatch(ctx, b); ok {
			return br
		}
	}
	pc, err := p.acquire(ctx)
	if err != nil {
		return pgx.FailedBatchResults(b, err)
	}
	res := pc.heldBatch(ctx, pc.conn.SendBatch(ctx, b), b, false)
	if res.tx != nil {
		res.tx.pc = pc
	} else {
		res.pc = pc
	}
	return res
}

// heldBatch wraps the results of a batch b sent on pc by its holder (a
// Conn's or a Tx's SendBatch), which releases pc itself. readOnly says that
// b runs in a transaction begun READ ONLY; a batch that begins one runs in
// it too. The errors of any other batch go to pc.noteErr.
func (pc *pooledConn) heldBatch(ctx context.Context, br pgx.BatchResults, b *pgx.Batch, readOnly bool) *poolBatchResults {
	tx := br.Tx()
	if tx != nil {
		readOnly = readOnly || batchBeginsReadOnly(b)
	}
	res := &poolBatchResults{br: br, conn: pc, ctx: ctx, note: !readOnly}
	if tx != nil {
		res.tx = &Tx{t: tx, conn: pc, readOnly: readOnly}
	}
	return res
}

// poolBatchResults are the results of a batch sent through the pool's API,
// with errors that match the batch's context once it ended, and, for
// Pool.SendBatch, the connection they hold.
type poolBatchResults struct {
	br   pgx.BatchResults
	conn *pooledConn     // the connection the batch runs on
	ctx  context.Context // the batch's
	pc   *pooledConn     // the connection to release on Close; nil once released, when tx holds it, or when the batch's sender does
	tx   *Tx             // the transaction the batch began
	note bool            // whether the batch's errors go to conn.noteErr: not in a transaction begun READ ONLY
}

// Exec reads the next result as pgx.BatchResults.Exec does.
func (br *poolBatchResults) Exec() (pgconn.CommandTag, error) {
	tag, err := br.br.Exec()
	err = ctxerr.Wrap(br.ctx, err)
	if br.note {
		br.conn.noteErr(br.ctx, err)
	}
	return tag, err
}

// Query reads the next result as pgx.BatchResults.Query does.
func (br *poolBatchResults) Query() (pgx.Rows, error) {
	rows, err := br.br.Query()
	return br.conn.wrapRows(br.ctx, rows, err, br.note)
}

// QueryRow reads the next result as pgx.BatchResults.QueryRow does.
func (br *poolBatchResults) QueryRow() pgx.Row {
	return br.conn.newRow(br.ctx, br.br.QueryRow(), false, br.note)
}

// Close reads what is left of the batch and releases the connection, unless
// the batch began a transaction, which then holds it. When the transaction
// never began (its BEGIN failed, or the connection broke first), there is
// nothing for Commit or Rollback to end, so the connection is released here
// too, and a caller that returns on Close's error loses nothing. Calling it
// again returns the same error and does nothing more.
func (br *poolBatchResults) Close() error {
	err := ctxerr.Wrap(br.ctx, br.br.Close())
	if br.note {
		br.conn.noteErr(br.ctx, err)
	}
	if pc := br.pc; pc != nil {
		br.pc = nil
		pc.release()
	}
	if tx := br.tx; tx != nil && !tx.ended && !br.conn.inTransaction() {
		tx.end()
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
