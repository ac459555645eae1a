package shoalpgx

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Tracing pipelined statements: ConnConfig.Tracer, when it is a
// pgx.QueryTracer or pgx.BatchTracer, hears of them as pgx would tell it of
// the same statements on a whole connection, with the shared connection's
// *pgx.Conn, which the tracer may read (Config, PgConn().PID()) and must
// not use: pgx no longer speaks on it. A Query's trace ends when its rows
// close, a QueryRow's at Scan, a batch's at Close; a batch's query read as
// rows is traced as they close, with their error. They trace no acquire
// or release: they hold no connection of their own. A statement that goes
// to another connection because the first broke before it left is traced
// once; the end names the connection it ran on.

// queryTrace is the trace of one pipelined statement.
type queryTrace struct {
	t    pgx.QueryTracer // nil: not traced
	ctx  context.Context
	conn *pgx.Conn // nil until started
}

// start tells the tracer of the statement, once, as it is first encoded.
// Encoded again for another connection, when the first broke before the
// statement left (pipePool.run), it runs on c, and the end names c.
func (q *queryTrace) start(ctx context.Context, c *pipeConn, sql string, args []any) {
	if q.t == nil {
		return
	}
	if q.conn != nil {
		q.conn = c.pc.conn
		return
	}
	q.conn = c.pc.conn
	q.ctx = q.t.TraceQueryStart(ctx, q.conn, pgx.TraceQueryStartData{SQL: sql, Args: args})
}

// end tells the tracer the statement ended, once.
func (q *queryTrace) end(tag pgconn.CommandTag, err error) {
	if q.t == nil || q.conn == nil {
		return
	}
	q.t.TraceQueryEnd(q.ctx, q.conn, pgx.TraceQueryEndData{CommandTag: tag, Err: err})
	q.t = nil
}

// batchTrace is the trace of one pipelined batch.
type batchTrace struct {
	t    pgx.BatchTracer // nil: not traced
	ctx  context.Context
	conn *pgx.Conn // nil until started
}

// start tells the tracer of the batch, once, as queryTrace.start does.
func (bt *batchTrace) start(ctx context.Context, c *pipeConn, b *pgx.Batch) {
	if bt.t == nil {
		return
	}
	if bt.conn != nil {
		bt.conn = c.pc.conn
		return
	}
	bt.conn = c.pc.conn
	bt.ctx = bt.t.TraceBatchStart(ctx, bt.conn, pgx.TraceBatchStartData{Batch: b})
}

// query tells the tracer of one result read, with the SQL and arguments
// that ran: pgx traces a batch's queries once their named arguments are
// rewritten.
func (bt *batchTrace) query(q batchStmt, tag pgconn.CommandTag, err error, readStart time.Time) {
	if bt.t == nil || bt.conn == nil {
		return
	}
	bt.t.TraceBatchQuery(bt.ctx, bt.conn, pgx.TraceBatchQueryData{SQL: q.sql, Args: q.args, CommandTag: tag, Err: err, ReadStartTime: readStart})
}

// end tells the tracer the batch ended, once.
func (bt *batchTrace) end(err error) {
	if bt.t == nil || bt.conn == nil {
		return
	}
	bt.t.TraceBatchEnd(bt.ctx, bt.conn, pgx.TraceBatchEndData{Err: err})
	bt.t = nil
}
