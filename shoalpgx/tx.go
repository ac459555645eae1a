package shoalpgx

import (
	"context"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/shoalpgx/internal/ctxerr"
)

// Begin acquires a connection and starts a transaction on it. The
// connection is held until the transaction commits or rolls back. As in
// pgxpool, ctx bounds only the acquire and the BEGIN; a transaction that is
// never ended keeps its connection. See BeginTx.
func (p *Pool) Begin(ctx context.Context) (pgx.Tx, error) {
	return p.BeginTx(ctx, pgx.TxOptions{})
}

// BeginTx acquires a connection and starts a transaction with opts on it.
// The connection is held until Commit or Rollback, which release it; defer
// Rollback as usual, it is safe after Commit.
func (p *Pool) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	pc, err := p.acquire(ctx)
	if err != nil {
		return nil, err
	}
	if ctx.Err() != nil {
		// pgx closes a connection whose BEGIN fails with anything but
		// the server's error, as it would with this context's.
		err := notSent(ctx, pc)
		pc.release()
		return nil, err
	}
	t, err := pc.conn.BeginTx(ctx, opts)
	if err != nil {
		pc.release()
		return nil, ctxerr.Wrap(ctx, err)
	}
	return &Tx{t: t, conn: pc, pc: pc, readOnly: beginsReadOnly(opts)}, nil
}

// notSent returns the error pgx gives for a statement on pc whose context
// ended before it was sent (it wraps ctx.Err(), and pgconn.Timeout and
// pgconn.SafeToRetry report true for it), without sending anything.
func notSent(ctx context.Context, pc *pooledConn) error {
	return pc.conn.PgConn().Exec(ctx, ";").Close()
}

// Tx is a transaction begun through the pool's API: by Begin or BeginTx on
// the Pool or on a Conn, by a SendBatch whose batch begins one, or a
// savepoint (Begin on a Tx). It implements pgx.Tx; its errors match the
// statement's context once it ended, as the pool's do. One begun on the
// Pool holds its connection until Commit or Rollback, as pgxpool's Tx does;
// the pool's Begin and BeginTx return a *Tx in a pgx.Tx, as pgxpool's
// return a *pgxpool.Tx.
type Tx struct {
	t    pgx.Tx
	conn *pooledConn // the connection it runs on
	pc   *pooledConn // the connection it releases when it ends; nil once released, and when its holder releases it (a Conn's)
	// ended is set once the transaction has ended (Commit, Rollback, a
	// batch whose BEGIN failed) or its rollback was left to a goroutine
	// (endAfterCtx): every method then returns pgx.ErrTxClosed, as pgx's
	// would, without touching t or the connection, which may be another
	// holder's by then.
	ended bool
	// outer is the transaction a savepoint was begun in (nil for the
	// outermost): a savepoint ends with it, as pgx's do, and must not
	// reach a connection whose rollback endAfterCtx left to a goroutine.
	outer *Tx
	// readOnly is set for a transaction its caller began READ ONLY: a
	// write it refuses (SQLSTATE 25006) is the caller's doing and says
	// nothing of the host (noteErr).
	readOnly bool
	// largeObjects is set on the outermost transaction once it or a
	// savepoint handed out large objects: pgx's, which hold pgx's
	// transaction and so bypass ended, and which only pgx's own end can
	// close. endAfterCtx then leaves the transaction to pgx.
	largeObjects bool
}

// beginsReadOnly reports whether opts begin a transaction READ ONLY: by
// AccessMode, or by a BeginQuery of the caller's own that says so.
func beginsReadOnly(opts pgx.TxOptions) bool {
	return opts.AccessMode == pgx.ReadOnly || saysReadOnly(opts.BeginQuery)
}

// batchBeginsReadOnly reports whether b, a batch that began a transaction
// (pgx.Batch.BeginTx), began it READ ONLY: its first statement is the
// BEGIN, as pgx wrote it from the options, or the options' BeginQuery.
func batchBeginsReadOnly(b *pgx.Batch) bool {
	return len(b.QueuedQueries) > 0 && saysReadOnly(b.QueuedQueries[0].SQL)
}

// saysReadOnly reports whether a BEGIN statement's text asks for READ ONLY,
// in any case and spacing.
func saysReadOnly(begin string) bool {
	return strings.Contains(strings.ToLower(strings.Join(strings.Fields(begin), " ")), "read only")
}

// inTransaction reports whether pc's session is inside a transaction, begun
// or failed, that a Commit or Rollback still has to end.
func (pc *pooledConn) inTransaction() bool {
	if pc.conn.IsClosed() {
		return false
	}
	switch pc.conn.PgConn().TxStatus() {
	case 'T', 'E':
		return true
	}
	return false
}

// closed reports whether the transaction, or one it is a savepoint of,
// has ended: its methods then return pgx.ErrTxClosed.
func (tx *Tx) closed() bool {
	for t := tx; t != nil; t = t.outer {
		if t.ended {
			return true
		}
	}
	return false
}

// end marks the transaction ended and releases the connection it holds.
func (tx *Tx) end() {
	tx.ended = true
	if pc := tx.pc; pc != nil {
		tx.pc = nil
		pc.release()
	}
}

// Begin starts a pseudo nested transaction (a savepoint). The savepoint
// ends with the transaction it was begun in: once that has ended, its
// methods return pgx.ErrTxClosed, as pgx's savepoints do.
func (tx *Tx) Begin(ctx context.Context) (pgx.Tx, error) {
	if tx.closed() {
		return nil, pgx.ErrTxClosed
	}
	t, err := tx.t.Begin(ctx)
	if err != nil {
		return nil, ctxerr.Wrap(ctx, err)
	}
	return &Tx{t: t, conn: tx.conn, outer: tx, readOnly: tx.readOnly}, nil
}

// Commit commits the transaction and releases the connection. As with
// pgx.Tx, it returns an error matching pgx.ErrTxClosed on a transaction
// already ended, and pgx.ErrTxCommitRollback when the server rolled back a
// failed transaction instead. When ctx has already ended nothing is sent,
// as with pgx; on a transaction begun on the Pool the connection is then
// rolled back in the background and goes back to the pool, where pgx would
// close it (unless the transaction handed out large objects: see
// LargeObjects).
func (tx *Tx) Commit(ctx context.Context) error {
	if tx.closed() {
		return pgx.ErrTxClosed
	}
	if ctx.Err() != nil && tx.pc != nil {
		return tx.endAfterCtx(ctx)
	}
	err := tx.t.Commit(ctx)
	tx.end()
	return ctxerr.Wrap(ctx, err)
}

// Rollback rolls the transaction back and releases the connection. It is
// safe to call after Commit (it then returns pgx.ErrTxClosed). When ctx
// has already ended (a deferred Rollback after a statement cut short) it
// returns pgx's error for that and, on a transaction begun on the Pool,
// rolls back in the background under a timeout of its own, so that the
// connection goes back to the pool where pgx would close it (unless the
// transaction handed out large objects: see LargeObjects).
func (tx *Tx) Rollback(ctx context.Context) error {
	if tx.closed() {
		return pgx.ErrTxClosed
	}
	if ctx.Err() != nil && tx.pc != nil {
		return tx.endAfterCtx(ctx)
	}
	err := tx.t.Rollback(ctx)
	tx.end()
	return ctxerr.Wrap(ctx, err)
}

// endAfterCtx ends a transaction begun on the Pool whose Commit or Rollback
// came with a context that had already ended: pgx would fail it unsent and
// close the connection. It fails it with pgx's error and rolls back on a
// goroutine of its own, under resetTimeout, releasing the connection after
// (pgx closes it if the rollback fails). A connection busy with unread rows
// is left to pgx, which closes it, and so is the transaction of large
// objects handed out: their methods reach pgx's transaction, not ours, and
// only pgx's end makes them return pgx.ErrTxClosed before the rollback
// goroutine, or the connection's next holder, is using the connection.
func (tx *Tx) endAfterCtx(ctx context.Context) error {
	pc := tx.pc
	if tx.largeObjects || pc.conn.IsClosed() || pc.conn.PgConn().IsBusy() {
		err := tx.t.Rollback(ctx)
		tx.end()
		return err
	}
	err := notSent(ctx, pc)
	tx.ended, tx.pc = true, nil
	t := tx.t
	go func() {
		rctx, cancel := context.WithTimeout(context.Background(), resetTimeout)
		_ = t.Rollback(rctx)
		cancel()
		pc.release()
	}()
	return err
}

// CopyFrom copies rows into a table inside the transaction.
func (tx *Tx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	if tx.closed() {
		return 0, pgx.ErrTxClosed
	}
	n, err := tx.t.CopyFrom(ctx, table, columns, src)
	err = ctxerr.Wrap(ctx, err)
	if !tx.readOnly {
		tx.conn.noteErr(ctx, err)
	}
	return n, err
}

// SendBatch sends a batch inside the transaction.
func (tx *Tx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	if tx.closed() {
		return pgx.FailedBatchResults(b, pgx.ErrTxClosed)
	}
	return tx.conn.heldBatch(ctx, tx.t.SendBatch(ctx, b), b, tx.readOnly)
}

// LargeObjects gives access to large objects inside the transaction. Once
// the transaction has ended, their methods return pgx.ErrTxClosed, and so
// do those of the large objects it handed out before. A transaction begun
// on the Pool that handed out large objects is not rolled back in the
// background when its Commit or Rollback comes with an ended context: pgx
// ends it, and closes its connection, as it would without the pool.
func (tx *Tx) LargeObjects() pgx.LargeObjects {
	if tx.closed() {
		return endedTx().LargeObjects()
	}
	tx.outermost().largeObjects = true
	return tx.t.LargeObjects()
}

// outermost returns the transaction tx is a savepoint of, or tx itself.
func (tx *Tx) outermost() *Tx {
	for tx.outer != nil {
		tx = tx.outer
	}
	return tx
}

// endedTx returns a pgx transaction that has ended, whose every method
// returns pgx.ErrTxClosed: what pgx's own gives after Commit or Rollback,
// for a Tx whose pgx transaction may still be rolling back (endAfterCtx).
func endedTx() pgx.Tx {
	var b pgx.Batch
	b.BeginTx(pgx.TxOptions{})
	return pgx.FailedBatchResults(&b, pgx.ErrTxClosed).Tx()
}

// Prepare prepares a statement on the transaction's connection.
func (tx *Tx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	if tx.closed() {
		return nil, pgx.ErrTxClosed
	}
	sd, err := tx.t.Prepare(ctx, name, sql)
	return sd, ctxerr.Wrap(ctx, err)
}

// Exec runs sql inside the transaction.
func (tx *Tx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	if tx.closed() {
		return pgconn.CommandTag{}, pgx.ErrTxClosed
	}
	tag, err := tx.t.Exec(ctx, sql, args...)
	err = ctxerr.Wrap(ctx, err)
	if !tx.readOnly {
		tx.conn.noteErr(ctx, err)
	}
	return tag, err
}

// Query runs sql inside the transaction.
func (tx *Tx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	if tx.closed() {
		return errRows{err: pgx.ErrTxClosed}, pgx.ErrTxClosed
	}
	rows, err := tx.t.Query(ctx, sql, args...)
	return tx.conn.wrapRows(ctx, rows, err, !tx.readOnly)
}

// QueryRow runs sql inside the transaction.
func (tx *Tx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	if tx.closed() {
		return errRow{err: pgx.ErrTxClosed}
	}
	return tx.conn.newRow(ctx, tx.t.QueryRow(ctx, sql, args...), false, !tx.readOnly)
}

// Conn returns the pgx connection the transaction runs on.
func (tx *Tx) Conn() *pgx.Conn { return tx.t.Conn() }
