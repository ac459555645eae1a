package shoalpgx

import (
	"context"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/shoalpool/shoal"
)

// pipeReq is one caller's request on a pipelined connection: its messages,
// ending in one Sync, and the answers to them, which the connection's
// reader fills in and the caller reads once the request is finished.
type pipeReq struct {
	buf   []byte        // the encoded messages
	res   []pipeResult  // one per statement, filled by the reader
	cur   int           // the statement the reader is filling
	err   error         // the connection's error, when it broke under the request
	ready chan struct{} // one token, sent by finish; buffered, so that it can be reused (pipeline_recycle.go)
	// unsent is set, under its connection's mutex before finish, when the
	// connection broke with the request still queued: no byte of it left,
	// so another connection may take it (pipePool.run).
	unsent bool
	state  atomic.Int32 // reqWaiting, then reqDone or reqAbandoned

	conn   *pipeConn              // set by send
	home   *sync.Pool             // where recycle gives it back; nil for one never reused
	onDone func(*pipeReq)         // a preparation's, run by the reader instead of waking a caller
	lease  shoal.Lease[*pipeConn] // the stream it holds
	build  pipeBuild              // what its encoder builds with (pipePool.run)
	chunk  []byte                 // where row values are copied to; see keep
	rows   pipeRows               // QueryRow's rows (pipeRow)
	one    [1]pipeResult          // res of a request of one statement
	// The first row's storage, inside the request, so that a one-row
	// answer, the usual one, allocates nothing for its row (appendRow).
	first [1][][]byte
	vals  [8][]byte
	small [64]byte
	// sentAt is pipeClock when it was written (0 before), for the pace
	// (pipeline_fill.go). Atomic: the reader loads it once the server has
	// answered, which orders it after the writer's store, but no lock does.
	sentAt atomic.Int64
}

// The states of a request: its caller waits for it, has it, or gave up.
const (
	reqWaiting = iota
	reqDone
	reqAbandoned
)

// pipeResult is the answer to one statement of a request.
type pipeResult struct {
	fields  []pgconn.FieldDescription
	rows    [][][]byte
	tag     pgconn.CommandTag
	err     error     // the server's *pgconn.PgError, or the request's error
	ended   bool      // CommandComplete or EmptyQueryResponse came
	params  []uint32  // a preparation's parameter types
	stmt    *pipeStmt // the cached statement it ran by name, if it did
	discard bool      // Exec's: rows are read and dropped
	// parsed: the server took the statement's text (ParseComplete came,
	// or it runs by a name prepared before), so an error from then on is
	// one it met while planning or running (a division by zero on a
	// later row), which pgx reports after the rows before it.
	parsed bool
}

func newPipeReq(statements int) *pipeReq {
	r := &pipeReq{ready: make(chan struct{}, 1)}
	if statements == 1 {
		r.res = r.one[:]
	} else {
		r.res = make([]pipeResult, statements)
	}
	r.buf = make([]byte, 0, 256)
	return r
}

// take files one message of the request's answer. Only the reader calls it.
func (r *pipeReq) take(msg pgproto3.BackendMessage) {
	if e, ok := msg.(*pgproto3.ErrorResponse); ok {
		r.takeError(e)
		return
	}
	if r.cur >= len(r.res) {
		return // nothing more was asked: ignore rather than index past the end
	}
	res := &r.res[r.cur]
	switch m := msg.(type) {
	case *pgproto3.RowDescription:
		res.fields = make([]pgconn.FieldDescription, len(m.Fields))
		for i, f := range m.Fields {
			res.fields[i] = pgconn.FieldDescription{
				Name:                 string(f.Name),
				TableOID:             f.TableOID,
				TableAttributeNumber: f.TableAttributeNumber,
				DataTypeOID:          f.DataTypeOID,
				DataTypeSize:         f.DataTypeSize,
				TypeModifier:         f.TypeModifier,
				Format:               f.Format,
			}
		}
	case *pgproto3.ParseComplete, *pgproto3.BindComplete:
		res.parsed = true
	case *pgproto3.ParameterDescription:
		res.params = append([]uint32(nil), m.ParameterOIDs...)
	case *pgproto3.DataRow:
		if !res.discard {
			res.rows = r.appendRow(res.rows, m.Values)
		}
	case *pgproto3.CommandComplete:
		res.tag = r.conn.tag(m.CommandTag)
		res.ended = true
		r.cur++
	case *pgproto3.EmptyQueryResponse:
		res.ended = true
		r.cur++
	}
	// NoData: nothing to keep.
}

// takeError files the server's error. During a statement, the server skips
// the request's other statements up to its Sync: each gets the error, as
// in a pgx batch. After the last one, it is the implicit commit's (a
// deferred constraint): every statement's work was rolled back, and every
// result gets the error.
func (r *pipeReq) takeError(m *pgproto3.ErrorResponse) {
	err := pgconn.ErrorResponseToPgError(m)
	from := r.cur
	if from >= len(r.res) {
		from = 0
	} else {
		// By name, its Bind or its run failed; a protocol violation (a
		// Bind with the wrong number of arguments) kept it from running.
		res := &r.res[from]
		res.parsed = (res.parsed || res.stmt != nil) && err.Code != "08P01"
	}
	for i := from; i < len(r.res); i++ {
		if r.res[i].err == nil {
			r.res[i].err = err
		}
	}
	r.cur = len(r.res)
}

// appendRow appends a copy of a row's values to rows. The request's first
// row goes into the arrays the request holds for it, when it fits.
func (r *pipeReq) appendRow(rows [][][]byte, values [][]byte) [][][]byte {
	if rows == nil && r.first[0] == nil && len(values) <= len(r.vals) {
		r.first[0] = r.keep(r.vals[:len(values):len(values)], values)
		return r.first[:1:1]
	}
	return append(rows, r.keep(make([][]byte, len(values)), values))
}

// keep copies a row's values out of the reader's buffer, which the next
// message overwrites, into row, pointing into chunks shared by the
// request's rows, so that a result of many small rows costs few
// allocations; the first chunk is the request's own small array.
func (r *pipeReq) keep(row, values [][]byte) [][]byte {
	n := 0
	for _, v := range values {
		n += len(v)
	}
	switch {
	case r.chunk == nil && n <= len(r.small):
		r.chunk = r.small[:0:len(r.small)]
	case r.chunk == nil || n > cap(r.chunk)-len(r.chunk):
		// Doubling for long answers.
		r.chunk = make([]byte, 0, max(n, min(2*cap(r.chunk), 8192), 64))
	}
	for i, v := range values {
		if v == nil {
			row[i] = nil // NULL
			continue
		}
		start := len(r.chunk)
		r.chunk = append(r.chunk, v...)
		row[i] = r.chunk[start:len(r.chunk):len(r.chunk)]
	}
	return row
}

// finish completes the request, with err when the connection failed under
// it, and reports whether its caller gave up, in which case the caller of
// finish ends its lease (endLease), outside the connection's mutex.
func (r *pipeReq) finish(err error) (abandoned bool) {
	if err != nil {
		r.err = err
	}
	if r.onDone != nil {
		r.onDone(r)
		return false
	}
	if r.state.CompareAndSwap(reqWaiting, reqDone) {
		r.ready <- struct{}{} // never waits: the one token, into a buffer of one
		return false
	}
	return true
}

// again readies a request that failed unsent (see unsent) for another
// connection: its caller has taken finish's token and ended its lease, and
// no answer was filed in it.
func (r *pipeReq) again() {
	r.err, r.unsent, r.conn, r.cur = nil, false, nil, 0
	r.sentAt.Store(0)
	r.state.Store(reqWaiting)
}

// endLease gives the request's stream back: released while its connection
// works, discarded once it broke, so that the pool replaces it.
func (r *pipeReq) endLease() {
	if r.conn != nil && r.conn.broken() != nil {
		r.lease.Discard()
		return
	}
	r.lease.Release()
}

// endLeases ends the leases of requests whose callers gave up.
func endLeases(rs []*pipeReq) {
	for _, r := range rs {
		r.endLease()
	}
}

// result returns the answer to statement i: the statement's own error, or
// else the connection's when it broke before the request's ReadyForQuery,
// even after the statement's CommandComplete: its implicit transaction
// commits at the Sync, so without the ReadyForQuery nobody knows whether it
// did.
func (r *pipeReq) result(i int) *pipeResult {
	res := &r.res[i]
	if r.err != nil && res.err == nil {
		res.err = r.err
	}
	return res
}

// invalidate forgets the cached statements of r that failed in a way that
// says they no longer fit the schema.
func (r *pipeReq) invalidate() {
	for i := range r.res {
		if res := &r.res[i]; res.stmt != nil && res.err != nil {
			r.conn.stmts.invalidate(res.stmt, res.err)
		}
	}
}

// noteErr lets the pool see a pipelined statement's error as it sees a
// whole connection's: a write refused as read-only resets the pool after a
// failover (hosts_failover.go), once the server confirms that it refuses
// writes (pipePool.judgeRefusal).
func (r *pipeReq) noteErr(ctx context.Context, err error) {
	if err == nil || r.conn == nil {
		return
	}
	pc := r.conn.pc
	p := pc.pool
	if p.resetOnReadOnly && pc.resetGen == p.resets.Load() && isReadOnlyErr(err) {
		p.pipe.judgeRefusal(ctx, pc)
	}
}
