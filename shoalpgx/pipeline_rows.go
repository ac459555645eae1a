package shoalpgx

import (
	"errors"
	"fmt"
	"reflect"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// pipeRows are the rows of a pipelined query, read whole before they were
// handed over: they hold no connection, and reading them never waits for
// the server. Values are decoded with the type map of the connection the
// query ran on, under its lock (typeMap), since a map is not safe for
// concurrent use and the connection's callers share it.
type pipeRows struct {
	res    *pipeResult
	tm     *typeMap
	i      int // rows[i-1] is the current row; 0 before the first Next
	err    error
	closed bool

	plans []pgtype.ScanPlan
	types []reflect.Type
	own   *pgtype.Map     // TypeMap's copy
	trace queryTrace      // ended by Close
	batch *batchRowsTrace // a batch's rows: traced by Close, once
	// req is the request res is in, given back for reuse at Close, when
	// res becomes kept; nil for a batch's rows, whose request holds the
	// batch's other results. inReq: the rows are QueryRow's, inside req,
	// which their pipeRow gives back once Scan is done with them.
	req   *pipeReq
	kept  pipeResult
	inReq bool

	planBuf [4]pgtype.ScanPlan // plans and types for a few columns, unallocated
	typeBuf [4]reflect.Type
}

// typeMap is a connection's pgtype.Map and the lock its callers take to use
// it.
type typeMap struct {
	mu sync.Mutex
	m  *pgtype.Map
}

var _ pgx.Rows = (*pipeRows)(nil)

func newPipeRows(res *pipeResult, tm *typeMap) *pipeRows {
	return &pipeRows{res: res, tm: tm, err: res.err}
}

// open makes r the rows of req's statement, answered, whose trace tr ends
// when they close.
func (r *pipeRows) open(req *pipeReq, tr queryTrace) {
	res := &req.res[0]
	*r = pipeRows{res: res, tm: req.conn.tm, err: res.err, req: req, trace: tr}
}

// Close closes the rows, ending the query's trace. It never fails and may
// be called more than once.
func (r *pipeRows) Close() {
	r.closed = true
	r.trace.end(r.res.tag, r.err)
	if bt := r.batch; bt != nil {
		r.batch = nil
		bt.trace.query(bt.q, r.res.tag, r.err, bt.start)
	}
	if req := r.req; req != nil && !r.inReq {
		// The tag, the columns and the error stay readable; the rows'
		// memory goes to the next statement.
		r.req = nil
		r.kept = pipeResult{fields: r.res.fields, tag: r.res.tag, err: r.res.err}
		r.res = &r.kept
		req.recycle()
	}
}

// Err returns the query's error, or the first error of a Scan or Values.
func (r *pipeRows) Err() error { return r.err }

// CommandTag returns the command tag of the query.
func (r *pipeRows) CommandTag() pgconn.CommandTag { return r.res.tag }

// FieldDescriptions returns the columns of the result.
func (r *pipeRows) FieldDescriptions() []pgconn.FieldDescription { return r.res.fields }

// Next moves to the next row, and returns false after the last one or on
// an error, closing the rows then. The rows that came before the
// statement's error are given first, as pgx gives them; a Scan's error
// closes the rows at once.
func (r *pipeRows) Next() bool {
	if r.closed || r.i >= len(r.res.rows) {
		r.Close()
		return false
	}
	r.i++
	return true
}

// RawValues returns the current row's values as the server sent them. They
// stay valid after Next, until the rows close (pgx's are valid until Next):
// then their memory goes to the next statement.
func (r *pipeRows) RawValues() [][]byte {
	if r.i == 0 || r.i > len(r.res.rows) {
		return nil
	}
	return r.res.rows[r.i-1]
}

// TypeMap returns a copy of the type map the rows are decoded with, made
// at the first call: the map itself is shared by the connection's callers,
// and a pgtype.Map is not safe for concurrent use. The copy has the
// registered types, not the RegisterDefaultPgType choices.
func (r *pipeRows) TypeMap() *pgtype.Map {
	if r.own == nil {
		r.tm.mu.Lock()
		r.own = r.tm.m.Copy()
		r.tm.mu.Unlock()
	}
	return r.own
}

// Conn returns nil: a pipelined query's connection is shared, and nobody
// may use it directly.
func (r *pipeRows) Conn() *pgx.Conn { return nil }

// fatal records the first error and closes the rows, as pgx's rows do.
func (r *pipeRows) fatal(err error) {
	if r.err == nil {
		r.err = err
	}
	r.Close()
}

// Scan reads the current row's values into dest, as pgx.Rows.Scan does.
func (r *pipeRows) Scan(dest ...any) error {
	values := r.RawValues()
	if values == nil {
		err := errors.New("shoalpgx: Scan called without a current row")
		r.fatal(err)
		return err
	}
	fields := r.res.fields
	if len(fields) != len(values) {
		err := fmt.Errorf("number of field descriptions must equal number of values, got %d and %d", len(fields), len(values))
		r.fatal(err)
		return err
	}
	if len(dest) == 1 {
		if rs, ok := dest[0].(pgx.RowScanner); ok {
			err := rs.ScanRow(r)
			if err != nil {
				r.fatal(err)
			}
			return err
		}
	}
	if len(fields) != len(dest) {
		err := fmt.Errorf("number of field descriptions must equal number of destinations, got %d and %d", len(fields), len(dest))
		r.fatal(err)
		return err
	}
	r.tm.mu.Lock()
	defer r.tm.mu.Unlock()
	if r.plans == nil {
		r.plans, r.types = r.scanPlans(len(dest))
	}
	for i, d := range dest {
		if d == nil {
			continue
		}
		if t := reflect.TypeOf(d); r.plans[i] == nil || r.types[i] != t {
			r.plans[i] = r.tm.m.PlanScan(fields[i].DataTypeOID, fields[i].Format, d)
			r.types[i] = t
		}
		if err := r.plans[i].Scan(values[i], d); err != nil {
			err = pgx.ScanArgError{ColumnIndex: i, FieldName: fields[i].Name, Err: err}
			r.fatal(err)
			return err
		}
	}
	return nil
}

// scanPlans returns where Scan keeps its plans for n columns: with the
// statement's cache when it ran by name, so that its next rows start
// planned; else in the rows' own arrays, or new ones past a few columns.
// r.tm.mu must be held.
func (r *pipeRows) scanPlans(n int) ([]pgtype.ScanPlan, []reflect.Type) {
	if st := r.res.stmt; st != nil {
		if len(st.plans) != n {
			st.plans, st.types = make([]pgtype.ScanPlan, n), make([]reflect.Type, n)
		}
		return st.plans, st.types
	}
	if n <= len(r.planBuf) {
		return r.planBuf[:n], r.typeBuf[:n]
	}
	return make([]pgtype.ScanPlan, n), make([]reflect.Type, n)
}

// Values returns the current row's values decoded, as pgx.Rows.Values
// does.
func (r *pipeRows) Values() ([]any, error) {
	if r.closed {
		return nil, errors.New("rows is closed")
	}
	values := r.RawValues()
	out := make([]any, 0, len(values))
	r.tm.mu.Lock()
	defer r.tm.mu.Unlock()
	for i, buf := range values {
		fd := &r.res.fields[i]
		if buf == nil {
			out = append(out, nil)
			continue
		}
		if t, ok := r.tm.m.TypeForOID(fd.DataTypeOID); ok {
			v, err := t.Codec.DecodeValue(r.tm.m, fd.DataTypeOID, fd.Format, buf)
			if err != nil {
				r.fatal(err)
				return nil, err
			}
			out = append(out, v)
			continue
		}
		if fd.Format == pgtype.TextFormatCode {
			out = append(out, string(buf))
		} else {
			out = append(out, append([]byte(nil), buf...))
		}
	}
	return out, nil
}

// pipeRow is QueryRow's result for a pipelined query. Its rows live in
// the statement's request, so that QueryRow allocates only the row, and
// Scan gives the request back for the next statement once it is done with
// them: the row then keeps only the rows' error, for a second Scan, and
// can never reach the next statement's answer.
type pipeRow struct {
	rows *pipeRows // nil once Scan has run
	err  error     // the error the rows ended with
}

// errDriverBytesRow is pgx's refusal, kept: a QueryRow's values are gone
// once Scan returns.
var errDriverBytesRow = errors.New("cannot scan into *pgtype.DriverBytes from QueryRow")

// Scan reads the first row into dest, as pgx.Row.Scan does: pgx.ErrNoRows
// when there is none. It closes the rows, whatever comes of it; called
// again, it returns their error, pgx's refusal of *pgtype.DriverBytes or
// pgx.ErrNoRows, as pgx's does. The request goes back for reuse, unless
// dest is a pgx.RowScanner, which was handed the rows and may keep them:
// those stay with their request, closed, so that nothing done with them
// reaches another caller's statement.
func (r *pipeRow) Scan(dest ...any) error {
	rows := r.rows
	if rows == nil {
		if r.err != nil {
			return r.err
		}
		if hasDriverBytes(dest) {
			return errDriverBytesRow
		}
		return pgx.ErrNoRows
	}
	r.rows = nil
	defer func() {
		rows.Close()
		r.err = rows.Err()
		if req := rows.req; rows.inReq && req != nil && !isRowScanner(dest) {
			req.recycle()
		}
	}()
	return rows.scanFirst(dest)
}

// scanFirst is pipeRow.Scan on the rows.
func (rows *pipeRows) scanFirst(dest []any) error {
	if hasDriverBytes(dest) {
		// Before the statement's error, which pgx's row only reads
		// after this refusal.
		rows.Close()
		return errDriverBytesRow
	}
	if !rows.Next() {
		if rows.Err() == nil {
			return pgx.ErrNoRows
		}
		return rows.Err()
	}
	if err := rows.Scan(dest...); err != nil {
		return err
	}
	return rows.Err()
}

// hasDriverBytes reports whether dest has a *pgtype.DriverBytes, whose
// bytes a QueryRow cannot keep valid.
func hasDriverBytes(dest []any) bool {
	for _, d := range dest {
		if _, ok := d.(*pgtype.DriverBytes); ok {
			return true
		}
	}
	return false
}

// isRowScanner reports whether dest is one pgx.RowScanner, which Scan
// hands the rows.
func isRowScanner(dest []any) bool {
	if len(dest) != 1 {
		return false
	}
	_, ok := dest[0].(pgx.RowScanner)
	return ok
}
