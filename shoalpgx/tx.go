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
	return &poolTx{t: t, pc: pc}, nil
}

// poolTx is a transaction begun through the pool, holding its connection
// until it ends.
type poolTx struct {
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

func (tx *poolTx) releaseConn() {
	if pc := tx.pc; pc != nil {
		tx.pc = nil
		pc.release()
	}
}

// Begin starts a pseudo nested transaction (a savepoint).
func (tx *poolTx) Begin(ctx context.Context) (pgx.Tx, error) { return tx.t.Begin(ctx) }

// Commit commits the transaction and releases the connection.
func (tx *poolTx) Commit(ctx context.Context) error {
	err := tx.t.Commit(ctx)
	tx.releaseConn()
	return err
}

// Rollback rolls the transaction back and releases the connection. It is
// safe to call after Commit (it then returns pgx.ErrTxClosed).
func (tx *poolTx) Rollback(ctx context.Context) error {
	err := tx.t.Rollback(ctx)
	tx.releaseConn()
	return err
}

// CopyFrom copies rows into a table inside the transaction.
func (tx *poolTx) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	return tx.t.CopyFrom(ctx, table, columns, src)
}

// SendBatch sends a batch inside the transaction.
func (tx *poolTx) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return tx.t.SendBatch(ctx, b)
}

// LargeObjects gives access to large objects inside the transaction.
func (tx *poolTx) LargeObjects() pgx.LargeObjects { return tx.t.LargeObjects() }

// Prepare prepares a statement on the transaction's connection.
func (tx *poolTx) Prepare(ctx context.Context, name, sql string) (*pgconn.StatementDescription, error) {
	return tx.t.Prepare(ctx, name, sql)
}

// Exec runs sql inside the transaction.
func (tx *poolTx) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	return tx.t.Exec(ctx, sql, args...)
}

// Query runs sql inside the transaction.
func (tx *poolTx) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	return tx.t.Query(ctx, sql, args...)
}

// QueryRow runs sql inside the transaction.
func (tx *poolTx) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return tx.t.QueryRow(ctx, sql, args...)
}

// Conn returns the pgx connection the transaction runs on.
func (tx *poolTx) Conn() *pgx.Conn { return tx.t.Conn() }
