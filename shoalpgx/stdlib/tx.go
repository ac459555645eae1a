package stdlib

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/shoalpgx/internal/ctxerr"
)

// BeginTx starts a transaction with database/sql's options: an isolation
// level PostgreSQL has (Snapshot is REPEATABLE READ, which in PostgreSQL
// is snapshot isolation) and read-only. WriteCommitted and Linearizable,
// which PostgreSQL has no level for, are refused. As database/sql
// documents, ctx bounds the whole transaction: Commit runs under it.
func (c *Conn) BeginTx(ctx context.Context, opts driver.TxOptions) (driver.Tx, error) {
	if err := c.usable(ctx, "begin"); err != nil {
		return nil, err
	}
	var txOpts pgx.TxOptions
	switch level := sql.IsolationLevel(opts.Isolation); level {
	case sql.LevelDefault:
	case sql.LevelReadUncommitted:
		txOpts.IsoLevel = pgx.ReadUncommitted
	case sql.LevelReadCommitted:
		txOpts.IsoLevel = pgx.ReadCommitted
	case sql.LevelRepeatableRead, sql.LevelSnapshot:
		txOpts.IsoLevel = pgx.RepeatableRead
	case sql.LevelSerializable:
		txOpts.IsoLevel = pgx.Serializable
	default:
		return nil, fmt.Errorf("shoalpgx/stdlib: isolation level %s is not supported by PostgreSQL (it has Read Uncommitted, Read Committed, Repeatable Read, alias Snapshot, and Serializable)", level)
	}
	if opts.ReadOnly {
		txOpts.AccessMode = pgx.ReadOnly
	}
	tx, err := c.conn.BeginTx(ctx, txOpts)
	if err != nil {
		return nil, c.failed(ctx, "begin", err)
	}
	return &sqlTx{tx: tx, ctx: ctx}, nil
}

// sqlTx is a transaction for database/sql.
type sqlTx struct {
	tx  pgx.Tx
	ctx context.Context // BeginTx's
}

// Commit commits under BeginTx's context. A failed transaction's commit
// rolls back and fails (pgx.ErrTxCommitRollback).
func (t *sqlTx) Commit() error { return ctxerr.Wrap(t.ctx, t.tx.Commit(t.ctx)) }

// Rollback rolls back under a context of its own: database/sql rolls back
// when BeginTx's context ends, and a rollback under that context would fail
// and cost the connection (pgx closes a connection whose rollback failed).
func (t *sqlTx) Rollback() error {
	ctx, cancel := context.WithTimeout(context.Background(), resetTimeout)
	defer cancel()
	return t.tx.Rollback(ctx)
}
