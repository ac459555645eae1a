package shoalpgx

import (
	"context"
	"errors"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
)

// The pool's operations on shared connections. Each returns ok false, and
// does nothing, for a statement that must have a whole connection
// (pipeline_route.go); the pool's operation then runs it as without
// pipelining.

// pipeExec is Exec on a shared connection.
func (p *Pool) pipeExec(ctx context.Context, sql string, args []any) (pgconn.CommandTag, bool, error) {
	// Traced as the caller passed them, options and all, as pgx does.
	traceSQL, traceArgs := sql, args
	sql, args, sm, ok := p.pipeRoute(ctx, sql, args)
	if !ok {
		return pgconn.CommandTag{}, false, nil
	}
	// pgx runs an Exec without arguments in the simple protocol, which
	// takes several statements in one string: those go to a whole
	// connection, since one of them could open a transaction that the
	// first keyword does not show.
	simple := len(args) == 0
	if simple && strings.IndexByte(sql, ';') >= 0 {
		return pgconn.CommandTag{}, false, nil
	}
	if simple {
		sm = modeUnnamed
	}
	r := p.pipe.getReq()
	r.res[0].discard = true
	tr := queryTrace{t: p.pipe.qt}
	err := p.pipe.run(ctx, r, sm, func(b *pipeBuild, buf []byte) ([]byte, error) {
		if simple {
			tr.start(ctx, b.c, traceSQL, traceArgs)
			buf = b.deallocations(buf)
			return (&pgproto3.Query{String: sql}).Encode(buf)
		}
		buf, err := b.statement(buf, sql, args, false, &r.res[0])
		if errors.Is(err, errPipeWhole) || err == nil && b.describeFirst {
			return buf, err // traced once built to be sent, or where it runs
		}
		tr.start(ctx, b.c, traceSQL, traceArgs)
		if err != nil {
			return nil, err
		}
		return (&pgproto3.Sync{}).Encode(buf)
	})
	if errors.Is(err, errPipeWhole) {
		// Started only on a connection that broke before it was sent:
		// ended here, as the whole connection traces it again.
		tr.end(pgconn.CommandTag{}, err)
		return pgconn.CommandTag{}, false, nil
	}
	if err != nil {
		tr.end(pgconn.CommandTag{}, err)
		return pgconn.CommandTag{}, true, err
	}
	res := r.result(0)
	if sm == modeCached && !simple {
		res.err = r.argCountErr(res, sql, len(args))
	}
	r.invalidate()
	r.noteErr(ctx, res.err)
	tr.end(res.tag, res.err)
	tag, err := res.tag, res.err
	r.recycle()
	return tag, true, err
}

// pipeQuery is Query on a shared connection: the rows are read whole
// before it returns. An error that kept the statement from running (a
// syntax error, the wrong number of arguments) is returned and carried by
// the rows, as pgx's modes that prepare or describe first return it, but
// for QueryExecModeExec, whose Query returns those from the rows alone, as
// pgx's does; one the statement met while running comes, as in pgx, from
// the rows' Err once Next has given the rows sent before it.
func (p *Pool) pipeQuery(ctx context.Context, sql string, args []any) (pgx.Rows, bool, error) {
	r, tr, sm, ok, err := p.pipeRun(ctx, sql, args)
	if !ok {
		return nil, false, nil
	}
	if r == nil {
		return errRows{err: err}, true, err
	}
	rows := &pipeRows{}
	rows.open(r, tr)
	if err := rows.err; err != nil && !rows.res.parsed && sm != modeUnnamed {
		rows.Close() // ends the trace, as pgx's rows do on an error, and gives r back
		return rows, true, err
	}
	return rows, true, nil
}

// pipeQueryRow is QueryRow on a shared connection. Its rows live in the
// request (see pipeRow).
func (p *Pool) pipeQueryRow(ctx context.Context, sql string, args []any) (pgx.Row, bool) {
	r, tr, _, ok, err := p.pipeRun(ctx, sql, args)
	if !ok {
		return nil, false
	}
	if r == nil {
		return errRow{err: err}, true
	}
	r.rows.open(r, tr)
	r.rows.inReq = true
	return &pipeRow{rows: &r.rows}, true
}

// pipeRun runs a statement whose rows are wanted on a shared connection
// and returns its request, answered, with the statement's trace, still
// open, and how it ran; ok is false when the statement must have a whole
// connection, and the request nil when err kept it from an answer.
func (p *Pool) pipeRun(ctx context.Context, sql string, args []any) (_ *pipeReq, _ queryTrace, _ stmtMode, ok bool, _ error) {
	traceSQL, traceArgs := sql, args // as in pipeExec
	sql, args, sm, ok := p.pipeRoute(ctx, sql, args)
	if !ok {
		return nil, queryTrace{}, sm, false, nil
	}
	r := p.pipe.getReq()
	tr := queryTrace{t: p.pipe.qt}
	err := p.pipe.run(ctx, r, sm, func(b *pipeBuild, buf []byte) ([]byte, error) {
		buf, err := b.statement(buf, sql, args, true, &r.res[0])
		if errors.Is(err, errPipeWhole) || err == nil && b.describeFirst {
			return buf, err // traced once built to be sent, or where it runs
		}
		tr.start(ctx, b.c, traceSQL, traceArgs)
		if err != nil {
			return nil, err
		}
		return (&pgproto3.Sync{}).Encode(buf)
	})
	if errors.Is(err, errPipeWhole) {
		tr.end(pgconn.CommandTag{}, err) // as in pipeExec
		return nil, queryTrace{}, sm, false, nil
	}
	if err != nil {
		err = queryArgCount(err)
		tr.end(pgconn.CommandTag{}, err)
		return nil, queryTrace{}, sm, true, err
	}
	res := r.result(0)
	if sm == modeCached {
		res.err = queryArgCount(r.argCountErr(res, sql, len(args)))
	}
	r.invalidate()
	r.noteErr(ctx, res.err)
	return r, tr, sm, true, nil
}

// pipeRoute reads a statement's options and rewrites its named arguments,
// and reports whether it may go to a shared connection (ok): not when it
// must have a whole connection, nor when a whole connection would be
// acquired for it anyway (pipePool.wholeFirst), nor when the Budget grants
// the shared connections none (pipePool.starved). A statement whose named
// arguments do not fit goes to a whole connection too, which fails it as
// pgx does and traces it: here there is no connection yet to trace it
// with.
func (p *Pool) pipeRoute(ctx context.Context, sql string, args []any) (_ string, _ []any, _ stmtMode, ok bool) {
	args, rewrite, mode, ok := pipeOptions(args, p.config.ConnConfig.DefaultQueryExecMode)
	sm := modeOf(mode)
	if !ok || cacheOff(mode, p.config.ConnConfig) || !p.pipe.sc.shareable(sql) || p.pipe.starved() {
		return "", nil, sm, false
	}
	sql, args, ok = rewritten(ctx, rewrite, sql, args)
	if !ok || p.pipe.wholeFirst(sm, args) {
		return "", nil, sm, false
	}
	return sql, args, sm, true
}

// rewritten applies pgx's named arguments, if any. ok is false when they
// do not fit the SQL: the statement then goes to a whole connection, whose
// pgx fails it and traces the failure.
func rewritten(ctx context.Context, rewrite pgx.QueryRewriter, sql string, args []any) (_ string, _ []any, ok bool) {
	if rewrite == nil {
		return sql, args, true
	}
	// pgx's named-argument rewriters do not use the connection.
	sql, args, err := rewrite.RewriteQuery(ctx, nil, sql, args)
	return sql, args, err == nil
}

// eqbs recycles the builders that encode arguments.
var eqbs = sync.Pool{New: func() any { return new(pgx.ExtendedQueryBuilder) }}

// appendStatement appends one statement of pgx's QueryExecModeExec to buf:
// Parse (unnamed), Bind with the arguments encoded in text by tm (the
// server infers their types), a Describe of the portal when the rows are
// wanted, and Execute. Results come in text, decoded by tm.
func appendStatement(buf []byte, tm *typeMap, sql string, args []any, describe bool) ([]byte, error) {
	eqb := eqbs.Get().(*pgx.ExtendedQueryBuilder)
	defer eqbs.Put(eqb)
	tm.mu.Lock()
	err := eqb.Build(tm.m, nil, args)
	tm.mu.Unlock()
	if err != nil {
		return nil, err
	}
	buf, err = (&pgproto3.Parse{Query: sql}).Encode(buf)
	if err != nil {
		return nil, err
	}
	buf, err = (&pgproto3.Bind{ParameterFormatCodes: eqb.ParamFormats, Parameters: eqb.ParamValues, ResultFormatCodes: eqb.ResultFormats}).Encode(buf)
	if err != nil {
		return nil, err
	}
	if describe {
		if buf, err = (&pgproto3.Describe{ObjectType: 'P'}).Encode(buf); err != nil {
			return nil, err
		}
	}
	return (&pgproto3.Execute{}).Encode(buf)
}
