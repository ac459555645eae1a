package shoalpgx

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// pipeSendBatch is SendBatch on a shared connection: the batch's statements
// with one Sync, as pgx sends them, so that they run in one implicit
// transaction and an error skips the rest, and the whole answer read before
// it returns. A batch that begins a transaction (pgx.Batch.BeginTx, or a
// BEGIN queued) or holds any statement that must have a whole connection
// goes to one.
func (p *Pool) pipeSendBatch(ctx context.Context, b *pgx.Batch) (pgx.BatchResults, bool) {
	if len(b.QueuedQueries) == 0 {
		return nil, false
	}
	mode := p.config.ConnConfig.DefaultQueryExecMode
	if mode == pgx.QueryExecModeSimpleProtocol || cacheOff(mode, p.config.ConnConfig) || p.pipe.starved() {
		return nil, false
	}
	stmts := make([]batchStmt, len(b.QueuedQueries))
	sm := modeOf(mode)
	for i, q := range b.QueuedQueries {
		args, rewrite, ok := batchOptions(q.Arguments)
		if !ok || !p.pipe.sc.shareable(q.SQL) {
			return nil, false
		}
		sql, args, ok := rewritten(ctx, rewrite, q.SQL, args)
		if !ok || p.pipe.wholeFirst(sm, args) {
			return nil, false // to pgx, as in pipeRoute
		}
		stmts[i] = batchStmt{sql, args}
	}
	r := newPipeReq(len(stmts))
	tr := batchTrace{t: p.pipe.bt}
	err := p.pipe.run(ctx, r, sm, func(pb *pipeBuild, buf []byte) ([]byte, error) {
		for i, s := range stmts {
			var err error
			if buf, err = pb.statement(buf, s.sql, s.args, true, &r.res[i]); err != nil {
				if !errors.Is(err, errPipeWhole) { // traced where it runs
					tr.start(ctx, pb.c, b)
					err = batchBuildErr(sm, s.sql, err)
				}
				return nil, err
			}
		}
		if pb.describeFirst {
			return buf, nil // traced once built to be sent
		}
		tr.start(ctx, pb.c, b)
		return (&pgproto3.Sync{}).Encode(buf)
	})
	if errors.Is(err, errPipeWhole) {
		tr.end(err) // as in pipeExec
		return nil, false
	}
	if err != nil {
		tr.end(err)
		return pgx.FailedBatchResults(b, err), true
	}
	r.invalidate()
	if sm == modeCached {
		if err := r.batchArgCountErr(stmts); err != nil {
			tr.end(err)
			return pgx.FailedBatchResults(b, err), true
		}
	}
	return &pipeBatchResults{r: r, tm: r.conn.tm, qs: b.QueuedQueries, stmts: stmts, trace: tr, ctx: ctx, rowsFail: sm != modeUnnamed}, true
}

// batchArgCountErr is the error pgx gives a batch, run as stmts on r's
// connection in QueryExecModeCacheStatement, one of whose statements has
// the wrong number of arguments: pgx prepares the batch's statements first
// and fails the whole batch before sending it, and so does a pipelined
// batch whose statement is cached (pipeBuild.statement). A statement's
// first run goes unnamed, and the server refuses it in its own words, or
// skips it after an earlier statement failed; its preparation, sent ahead
// of the batch, tells the count, and the batch fails as pgx's then (its
// implicit transaction rolled back what ran before the failure). It is
// nil when the batch failed otherwise, or not at all.
func (r *pipeReq) batchArgCountErr(stmts []batchStmt) error {
	for i, s := range stmts {
		if res := r.result(i); res.err == nil || res.stmt != nil {
			continue
		}
		if err := r.preparedArgCount(s.sql, len(s.args)); err != nil {
			return batchBuildErr(modeCached, s.sql, err)
		}
	}
	return nil
}

// batchStmt is a batch's query as it runs: its named arguments, if any,
// rewritten.
type batchStmt struct {
	sql  string
	args []any
}

// pipeBatchResults are the results of a pipelined batch, all in memory.
type pipeBatchResults struct {
	r      *pipeReq
	tm     *typeMap
	qs     []*pgx.QueuedQuery
	stmts  []batchStmt // qs as they ran, as pgx traces them
	i      int         // the next result to read
	err    error       // the first error read, returned from then on
	closed bool
	trace  batchTrace
	ctx    context.Context // the batch's, for the look after a refused write (noteErr)
	noted  bool            // a result's error went to noteErr: the others' are the same one
	// last are the rows Query returned last. Where pgx sends a batch as
	// a pipeline, in every mode but QueryExecModeExec (rowsFail), their
	// error, a Scan's too, is the batch's from the next read on.
	last     *pipeRows
	rowsFail bool
}

// batchRowsTrace is what a batch's rows need to trace their query when
// they close, as pgx traces it then, with their error.
type batchRowsTrace struct {
	trace *batchTrace
	q     batchStmt
	start time.Time
}

var (
	errBatchClosed   = errors.New("batch already closed")
	errNoMoreResults = errors.New("no more results in batch")
)

// next returns the next result, when it was read, or the batch's error.
// It traces the result when traced is true; the rows of one read
// otherwise trace it as they close.
func (b *pipeBatchResults) next(traced bool) (*pipeResult, time.Time, error) {
	if b.closed {
		return nil, time.Time{}, errBatchClosed
	}
	b.takeRowsErr()
	if b.err != nil {
		return nil, time.Time{}, b.err
	}
	if b.i >= len(b.r.res) {
		// The caller's mistake, not the batch's: as in pgx, it fails this
		// read alone, and Close still reports how the batch ran.
		return nil, time.Time{}, errNoMoreResults
	}
	start := time.Now()
	res := b.r.result(b.i)
	if res.err != nil && !b.noted {
		b.noted = true
		b.r.noteErr(b.ctx, res.err)
	}
	if traced {
		b.trace.query(b.stmts[b.i], res.tag, res.err, start)
	}
	b.i++
	if res.err != nil {
		b.err = res.err
	}
	return res, start, res.err
}

// takeRowsErr makes the last rows' error the batch's, where it is (see
// pipeBatchResults.last).
func (b *pipeBatchResults) takeRowsErr() {
	if b.rowsFail && b.err == nil && b.last != nil && b.last.err != nil {
		b.err = b.last.err
	}
}

// Exec reads the next result as pgx.BatchResults.Exec does.
func (b *pipeBatchResults) Exec() (pgconn.CommandTag, error) {
	res, _, err := b.next(true)
	if err != nil {
		return pgconn.CommandTag{}, err
	}
	return res.tag, nil
}

// Query reads the next result as pgx.BatchResults.Query does: the error
// of the statement that failed while running comes from its rows, after
// the rows before it; the statements after it fail with it. The query is
// traced when its rows close.
func (b *pipeBatchResults) Query() (pgx.Rows, error) {
	i := b.i
	res, start, err := b.next(false)
	if err != nil && (res == nil || !res.parsed) {
		if res != nil { // read, and failed before its rows: traced now, as in pgx
			b.trace.query(b.stmts[i], res.tag, err, start)
		}
		return errRows{err: err}, err
	}
	rows := newPipeRows(res, b.tm)
	rows.batch = &batchRowsTrace{trace: &b.trace, q: b.stmts[i], start: start}
	b.last = rows
	return rows, nil
}

// QueryRow reads the next result as pgx.BatchResults.QueryRow does.
func (b *pipeBatchResults) QueryRow() pgx.Row {
	rows, err := b.Query()
	if err != nil {
		return errRow{err: err}
	}
	return &pipeRow{rows: rows.(*pipeRows)}
}

// Close runs the callbacks of the queries not read yet, as pgx's does, and
// returns the batch's first error. Calling it again returns the same.
func (b *pipeBatchResults) Close() error {
	if b.closed {
		return b.err
	}
	b.takeRowsErr()
	for b.err == nil && b.i < len(b.r.res) {
		var err error
		if fn := b.qs[b.i].Fn; fn != nil {
			err = fn(b)
		} else {
			_, err = b.Exec()
		}
		if err != nil && b.err == nil {
			b.err = err
		}
	}
	b.closed = true
	b.trace.end(b.err)
	return b.err
}

// Tx returns nil: a batch that begins a transaction is never pipelined.
func (b *pipeBatchResults) Tx() pgx.Tx { return nil }
