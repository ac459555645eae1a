package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
)

// ceilingName is the pipeline set's measure of the protocol's own
// ceiling: pgx's pipeline API on 8 connections, each driven by one
// goroutine that sends -pipeline statements per round trip, every one
// its own implicit transaction, and reads their answers. No goroutine
// hands a statement to another, so it shows what pipelining on these
// connections can reach on this machine whatever a pool does.
const ceilingName = "pgx-pipeline-8"

// ceilingConn is one of the ceiling's connections with what its goroutine
// keeps between calls: the statements it has prepared, and where it
// encodes the arguments and decodes the rows.
type ceilingConn struct {
	pg    *pgconn.PgConn
	tm    *pgtype.Map
	stmts map[string]*ceilingStmt
	buf   []byte
	// The values a row is decoded into, as pgxWorker decodes them.
	acct    account
	one     int
	acctDst []any
	oneDst  []any
}

// ceilingStmt is a statement prepared on one connection, with the formats
// pgx's default mode would use for it and the scan plans of its columns,
// made at its first row.
type ceilingStmt struct {
	sd            *pgconn.StatementDescription
	paramFormats  []int16
	resultFormats []int16
	params        [][]byte
	plans         []pgtype.ScanPlan
}

// inFlight32Name is the ceiling with as many statements in flight as 32
// workers can keep, no more: pgx's pipeline on 4 connections, 8
// statements per round trip each. Of the ways to keep 32 in flight on at
// most 8 connections, 8 x 4, 4 x 8 and 2 x 16, 4 x 8 reached the most
// here, so it is what the 32-worker targets are held against.
const inFlight32Name = "pgx-pipeline-4x8"

// openPgxPipeline opens conns connections for the ceiling, which sends
// -pipeline statements per call of its worker.
func openPgxPipeline(ctx context.Context, dsn string, conns int) (opened, error) {
	return openPgxPipelineDepth(ctx, dsn, conns, pipelineDepth)
}

// openInFlight32 opens the ceiling at 32 statements in flight: 8 per call
// of its worker, on its 4 connections.
func openInFlight32(ctx context.Context, dsn string, conns int) (opened, error) {
	return openPgxPipelineDepth(ctx, dsn, conns, 8)
}

// openPgxPipelineDepth opens conns connections driven as the ceiling
// drives them, depth statements per call of a worker, which is what
// main's count of statements multiplies by.
func openPgxPipelineDepth(ctx context.Context, dsn string, conns, depth int) (opened, error) {
	pcs := make([]*pgx.Conn, 0, conns)
	closeAll := func() {
		for _, c := range pcs {
			_ = c.Close(context.Background())
		}
	}
	cs := make([]*ceilingConn, conns)
	for i := range cs {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			closeAll()
			return opened{}, err
		}
		pcs = append(pcs, c)
		cc := &ceilingConn{pg: c.PgConn(), tm: c.TypeMap(), stmts: map[string]*ceilingStmt{}}
		a := &cc.acct
		cc.acctDst = []any{&a.id, &a.name, &a.email, &a.balance, &a.created}
		cc.oneDst = []any{&cc.one}
		cs[i] = cc
	}
	return opened{
		worker:  func(q query) worker { return ceilingWorker(q, cs, depth) },
		close:   closeAll,
		perCall: depth,
	}, nil
}

// ceilingWorker sends depth statements of q on worker w's connection, a
// sync after each, flushes them in one write, and reads every answer up
// to its sync. Statement k of call i gets the arguments pgxWorker gives a
// worker's iteration i*depth+k.
func ceilingWorker(q query, cs []*ceilingConn, depth int) worker {
	return func(ctx context.Context, w, i int) error {
		c := cs[w]
		st, err := c.statement(ctx, q.sql)
		if err != nil {
			return err
		}
		p := c.pg.StartPipeline(ctx)
		for k := range depth {
			if err := c.encode(st, q.args(w, i*depth+k)); err != nil {
				_ = p.Close()
				return err
			}
			// By statement, as pgx's default mode runs a prepared
			// statement: SendQueryPrepared would describe it again each
			// time, which neither pgx nor shoalpgx does.
			p.SendQueryStatement(st.sd, st.params, st.paramFormats, st.resultFormats)
			p.SendPipelineSync()
		}
		if err := p.Flush(); err != nil {
			return err // Flush has closed the pipeline
		}
		for range depth {
			if err := c.read(p, q, st); err != nil {
				_ = p.Close()
				return err
			}
		}
		return p.Close()
	}
}

// statement returns sql prepared on c, preparing it the first time.
func (c *ceilingConn) statement(ctx context.Context, sql string) (*ceilingStmt, error) {
	if st, ok := c.stmts[sql]; ok {
		return st, nil
	}
	sd, err := c.pg.Prepare(ctx, fmt.Sprintf("ceiling_%d", len(c.stmts)), sql, nil)
	if err != nil {
		return nil, err
	}
	st := &ceilingStmt{sd: sd, params: make([][]byte, len(sd.ParamOIDs))}
	for _, oid := range sd.ParamOIDs {
		st.paramFormats = append(st.paramFormats, c.tm.FormatCodeForOID(oid))
	}
	for _, f := range sd.Fields {
		st.resultFormats = append(st.resultFormats, c.tm.FormatCodeForOID(f.DataTypeOID))
	}
	c.stmts[sql] = st
	return st, nil
}

// encode sets st.params to args encoded as the statement's parameters.
// The pipeline copies them into its buffer as it queues the statement, so
// the next statement may reuse the space.
func (c *ceilingConn) encode(st *ceilingStmt, args []any) error {
	if len(args) != len(st.params) {
		return fmt.Errorf("%d arguments for %d parameters", len(args), len(st.params))
	}
	c.buf = c.buf[:0]
	for k, a := range args {
		start := len(c.buf)
		var err error
		if c.buf, err = c.tm.Encode(st.sd.ParamOIDs[k], st.paramFormats[k], a, c.buf); err != nil {
			return fmt.Errorf("argument %d: %w", k+1, err)
		}
		st.params[k] = c.buf[start:len(c.buf):len(c.buf)]
	}
	return nil
}

// read reads one statement's answer and the sync after it, decoding the
// rows into the types pgxWorker scans, and checks what it got as
// pgxWorker does: one row read, or one row inserted.
func (c *ceilingConn) read(p *pgconn.Pipeline, q query, st *ceilingStmt) error {
	res, err := p.GetResults()
	if err != nil {
		return err
	}
	rr, ok := res.(*pgconn.ResultReader)
	if !ok {
		return fmt.Errorf("%s: the pipeline answered %T, want a result", q.name, res)
	}
	dst := c.oneDst
	if q.rows {
		dst = c.acctDst
	}
	n := 0
	for rr.NextRow() {
		n++
		if q.exec {
			continue
		}
		values := rr.Values()
		if len(values) != len(dst) {
			_, _ = rr.Close()
			return fmt.Errorf("%s: %d columns, want %d", q.name, len(values), len(dst))
		}
		if st.plans == nil {
			fds := rr.FieldDescriptions()
			for k, fd := range fds {
				st.plans = append(st.plans, c.tm.PlanScan(fd.DataTypeOID, fd.Format, dst[k]))
			}
		}
		for k, v := range values {
			if err := st.plans[k].Scan(v, dst[k]); err != nil {
				_, _ = rr.Close()
				return fmt.Errorf("%s: column %d: %w", q.name, k+1, err)
			}
		}
	}
	tag, err := rr.Close()
	if err != nil {
		return err
	}
	if q.exec && tag.RowsAffected() != 1 {
		return fmt.Errorf("%s affected %d rows", q.name, tag.RowsAffected())
	}
	if !q.exec && n != 1 {
		return fmt.Errorf("%s returned %d rows", q.name, n)
	}
	res, err = p.GetResults()
	if err != nil {
		return err
	}
	if _, ok := res.(*pgconn.PipelineSync); !ok {
		return fmt.Errorf("%s: the pipeline answered %T, want its sync", q.name, res)
	}
	return nil
}
