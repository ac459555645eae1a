package shoalpgx

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
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
	t, err := pc.conn.BeginTx(ctx, opts)
	if err != nil {
		pc.release()
		return nil, err
	}
	return &Tx{t: t, pc: pc}, nil
}

// Tx is a transaction begun through the pool (Begin, BeginTx, or a
// SendBatch whose batch begins one), holding its connection until Commit or
// Rollback, as pgxpool's Tx does. It implements pgx.Tx; the pool's Begin and
// BeginTx return a *Tx in a pgx.Tx, as pgxpool's return a *pgxpool.Tx.
type Tx struct {
	t  pgx.Tx
	pc *pooledConn // nil once released
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

func (tx *Tx) releaseConn() {
	if pc := tx.pc; pc != nil {
		tx.pc = nil
		pc.release()
	}
}

// Begin starts a pseudo nested transaction (a savepoint).
func (tx *Tx) Begin(ctx context.Context) (pgx.Tx, error) { return tx.t.Begin(ctx) }

// Commit commits the transaction and releases the connection. As with
// pgx.Tx, it returns an error matching pgx.ErrTxClosed on a transaction
// already ended, and pgx.ErrTxCommitRollback when the server rolled back a
// failed transaction instead.
func (tx *Tx) Commit(ctx context.Context) error {
	err := tx.t.Commit(ctx)
	tx.releaseConn()
	return err
}

// Rollback rolls the transaction back and releases the connection. It is
// safe to call after Commit (it then returns pgx.ErrTxClosed).
func (tx *Tx) Rollback(ctx context.Context) error {
	err := tx.t.Rollback(ctx)
	tx.releaseConn()
	return err
}

// CopyFrom copies rows into a table inside the transaction.
func (tx *Tx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	return tx.t.CopyFrom(ctx, table, columns, src)
}

// SendBatch sends a batch inside the transaction.
func (tx *Tx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return tx.t.SendBatch(ctx, b)
}

// LargeObjects gives access to large objects inside the transaction.
func (tx *Tx) LargeObjects() pgx.LargeObjects { return tx.t.LargeObjects() }

// Prepare prepares a statement on the transaction's connection.
func (tx *Tx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	return tx.t.Prepare(ctx, name, sql)
}

// Exec runs sql inside the transaction.
func (tx *Tx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := tx.t.Exec(ctx, sql, args...)
	if pc := tx.pc; pc != nil {
		pc.noteErr(err)
	}
	return tag, err
}

// Query runs sql inside the transaction.
func (tx *Tx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return tx.t.Query(ctx, sql, args...)
}

// QueryRow runs sql inside the transaction.
func (tx *Tx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return tx.t.QueryRow(ctx, sql, args...)
}

// Conn returns the pgx connection the transaction runs on.
func (tx *Tx) Conn() *pgx.Conn { return tx.t.Conn() }
