package shoalpgx

import (
	"errors"
	"reflect"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgproto3"
	"github.com/jackc/pgx/v5/pgtype"
)

// Statements cached per shared connection, for pgx's default
// QueryExecModeCacheStatement: the first time a connection sees a
// statement, the request that runs it goes unnamed as in
// QueryExecModeExec, and just before it, in the same write, a request that
// prepares it under a name and describes it; from then on the statement
// runs by name with its arguments and results in the formats its types
// prefer, and the server neither parses nor plans it again. Nobody waits
// for the preparation. A connection caches ConnConfig's
// StatementCacheCapacity statements (pgx's 512 by default), and once full
// runs the others unnamed rather than evict: a name in use by a request in
// flight cannot be deallocated safely.

// pipeStmts is a connection's cache.
type pipeStmts struct {
	mu       sync.Mutex
	capacity int
	next     int                  // the number of the next name
	bySQL    map[string]*pipeStmt // prepared or being prepared
	dropped  []string             // names to deallocate with the next request
	// unencoded holds statements forgotten because an argument failed
	// to encode as a parameter's type, until they are prepared again:
	// their next run waits for that preparation, as one whose argument's
	// Go type does not say its parameter's type, rather than go unnamed.
	// Unnamed, the server would type the argument and run the statement
	// pgx refuses (an int for a text parameter), on every other try.
	unencoded map[string]struct{}
}

// pipeStmt is one statement prepared on a connection.
type pipeStmt struct {
	sql    string
	name   string
	sd     *pgconn.StatementDescription // nil until prepared
	fields []pgconn.FieldDescription    // sd.Fields in the result formats asked for
	// The plans that scanned its last rows, and the destination types
	// they are for, kept for the next rows (pipeRows.Scan): planning is
	// a good part of a small row's Scan. Guarded by the connection's
	// typeMap lock, which scanning holds.
	plans []pgtype.ScanPlan
	types []reflect.Type
	// builds counts the requests built by its name and not yet queued
	// (pipeBuild.named), with stmtForgotten set once the cache forgot
	// it: its Close waits for the last of them (release), since a Close
	// on a request queued ahead of one would deallocate the statement
	// before that request's Bind reached the server.
	builds atomic.Int32
}

// stmtForgotten is pipeStmt.builds' flag for a statement the cache forgot.
const stmtForgotten = 1 << 30

// pipeBuild is what a request's encoder builds with: the connection it
// goes on, the preparations to send before it, and the names of the
// statements it deallocates.
type pipeBuild struct {
	c      *pipeConn
	mode   stmtMode
	preps  []*pipeReq
	closes []string
	named  []*pipeStmt // the cached statements it runs by name (pipeStmt.builds)
	// namedOne is named's storage for the usual request, of one
	// statement, so that it allocates nothing.
	namedOne [1]*pipeStmt
	// describeFirst: a statement with an argument whose Go type does not
	// say its parameter's type (typeMap.describes) is being prepared, and
	// was left out of what was built; run waits for the preparation and
	// builds the request again, described counting the waits, so that it
	// goes by name (pipeline_describe.go).
	describeFirst bool
	described     int
}

// describeRounds bounds how many times one request waits for a
// preparation: another caller's, found in the cache but not yet queued
// when this one's Sync went out, may still be unanswered after the first
// wait (see statement). Past it the statement goes to a whole connection
// (errPipeWhole).
const describeRounds = 3

// errPipeUnsent fails the preparations of a request that was never sent.
var errPipeUnsent = errors.New("shoalpgx: request not sent")

// unsent undoes what building a request took from the connection's cache,
// when the request is not sent after all (an argument failed to encode):
// its preparations are forgotten, so that the statement is prepared the
// next time, and its deallocations go to the next request.
func (b *pipeBuild) unsent() {
	for _, p := range b.preps {
		p.finish(errPipeUnsent)
	}
	b.preps = b.preps[:0]
	b.closesUnsent()
	b.release()
}

// release ends what the request built counts in its statements' builds,
// once it is queued on its connection or given up: a statement forgotten
// meanwhile is deallocated from then on, by a request queued after it.
func (b *pipeBuild) release() {
	for _, st := range b.named {
		if st.builds.Add(-1) == stmtForgotten {
			s := &b.c.stmts
			s.mu.Lock()
			s.dropped = append(s.dropped, st.name)
			s.mu.Unlock()
		}
	}
	clear(b.named)
	b.named = b.named[:0]
}

// closesUnsent gives the deallocations a request carried back to its
// connection, for the next request to carry, when the request never left:
// an argument failed to encode, or its caller gave up while it waited in
// the queue (pipePool.await). Its preparations, queued ahead of it, still
// go out.
func (b *pipeBuild) closesUnsent() {
	if len(b.closes) > 0 {
		s := &b.c.stmts
		s.mu.Lock()
		s.dropped = append(s.dropped, b.closes...)
		s.mu.Unlock()
		b.closes = b.closes[:0]
	}
}

// statement appends one statement to buf: by name when it is prepared on
// the connection, else unnamed (and, the first time, prepared beside). It
// presets res.fields for a statement run by name, which is not described.
func (b *pipeBuild) statement(buf []byte, sql string, args []any, describe bool, res *pipeResult) ([]byte, error) {
	c := b.c
	res.fields, res.stmt = nil, nil // from another connection's try, if any
	buf = b.deallocations(buf)
	if b.mode != modeCached {
		if b.mode == modeDescribed && c.tm.describes(args) {
			return nil, errPipeWhole
		}
		return appendStatement(buf, c.tm, sql, args, describe)
	}
	st, prep, preparing := c.stmts.lookup(c, sql)
	if prep != nil {
		b.preps = append(b.preps, prep)
	}
	if st == nil {
		// After a wait, still preparing with no preparation of this
		// request's: another caller's, which it found in the cache
		// before queuing it, went out after this request's Sync, and
		// is waited for again. One of its own, made because the last
		// failed (a syntax error), goes beside its unnamed run, which
		// reports the server's error.
		if (prep == nil || b.described == 0) && (c.tm.describes(args) || c.stmts.isUnencoded(sql)) {
			if preparing && b.described < describeRounds {
				// Not appended: what is built now goes unsent, and
				// run builds it again once the preparation is in.
				b.describeFirst = true
				return buf, nil
			}
			// Nothing to wait for (the cache is full), or waited
			// enough: unnamed, it would go as its Go type says, so
			// it runs on a whole connection, which describes it.
			return nil, errPipeWhole
		}
		return appendStatement(buf, c.tm, sql, args, describe)
	}
	if b.named == nil {
		b.named = b.namedOne[:0]
	}
	b.named = append(b.named, st) // lookup counted it in st.builds
	if len(st.sd.ParamOIDs) != len(args) {
		// The call is wrong, not the statement: it stays cached.
		return nil, &argCountError{params: len(st.sd.ParamOIDs), args: len(args)}
	}
	eqb := eqbs.Get().(*pgx.ExtendedQueryBuilder)
	defer eqbs.Put(eqb)
	c.tm.mu.Lock()
	err := eqb.Build(c.tm.m, st.sd, args)
	c.tm.mu.Unlock()
	if err != nil {
		// The parameter types it was prepared with may be stale: a
		// column widened from int to bigint refuses a value past
		// 2^31 here, before the server sees it, for as long as the
		// statement stays cached. pgx forgets a cached statement
		// whose arguments failed to encode; so does the connection,
		// and its next run prepares it afresh, and waits for that.
		c.stmts.forgetUnencoded(st)
		return nil, err
	}
	buf, err = (&pgproto3.Bind{PreparedStatement: st.name, ParameterFormatCodes: eqb.ParamFormats, Parameters: eqb.ParamValues, ResultFormatCodes: eqb.ResultFormats}).Encode(buf)
	if err != nil {
		return nil, err
	}
	res.fields = st.fields
	res.stmt = st
	return (&pgproto3.Execute{}).Encode(buf)
}

// lookup returns sql's statement when it is prepared, counted in its builds
// until the caller's request is queued (pipeBuild.release), and, when the
// cache has room and has not seen sql, the request that prepares it. preparing
// says that a preparation is under way, queued on the connection ahead of
// whatever the caller sends next: the one it returns, or another's.
func (s *pipeStmts) lookup(c *pipeConn, sql string) (st *pipeStmt, prep *pipeReq, preparing bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if st, ok := s.bySQL[sql]; ok {
		if st.sd == nil {
			return nil, nil, true
		}
		st.builds.Add(1)
		return st, nil, false
	}
	if len(s.bySQL) >= s.capacity {
		return nil, nil, false
	}
	if s.bySQL == nil {
		s.bySQL = map[string]*pipeStmt{}
	}
	made := &pipeStmt{sql: sql, name: "shoal_" + strconv.Itoa(s.next)}
	s.next++
	s.bySQL[sql] = made
	prep = newPipeReq(1)
	prep.onDone = func(r *pipeReq) { s.prepared(c, made, r) }
	var err error
	prep.buf, err = (&pgproto3.Parse{Name: made.name, Query: sql}).Encode(nil)
	if err == nil {
		prep.buf, err = (&pgproto3.Describe{ObjectType: 'S', Name: made.name}).Encode(prep.buf)
	}
	if err == nil {
		prep.buf, err = (&pgproto3.Sync{}).Encode(prep.buf)
	}
	if err != nil {
		delete(s.bySQL, sql)
		return nil, nil, false
	}
	return nil, prep, true
}

// prepared files the answer to a preparation: the statement runs by name
// from now on, or, when it failed, is forgotten (its unnamed run reports
// the error to its caller).
func (s *pipeStmts) prepared(c *pipeConn, st *pipeStmt, r *pipeReq) {
	res := &r.res[0]
	s.mu.Lock()
	delete(s.unencoded, st.sql) // the next failure to encode, if any, files it again
	s.mu.Unlock()
	if r.err != nil || res.err != nil {
		s.mu.Lock()
		delete(s.bySQL, st.sql)
		s.mu.Unlock()
		return
	}
	fields := make([]pgconn.FieldDescription, len(res.fields))
	copy(fields, res.fields)
	c.tm.mu.Lock()
	for i := range fields {
		fields[i].Format = c.tm.m.FormatCodeForOID(fields[i].DataTypeOID)
	}
	c.tm.mu.Unlock()
	s.mu.Lock()
	st.sd = &pgconn.StatementDescription{Name: st.name, SQL: st.sql, ParamOIDs: res.params, Fields: res.fields}
	st.fields = fields
	s.mu.Unlock()
}

// invalidate forgets a statement that failed in a way that says the
// server's prepared statement may no longer fit (the schema changed under
// it), and deallocates it with the connection's next request. Not only
// 0A000 (its result type changed) and 26000 (it is gone): the server plans
// a prepared statement again with the parameter types it was prepared
// with, so a column whose type changed can fail it with any error of class
// 42 (42883, no operator for "text = integer"; 42804, a mismatch), on
// every run, where a statement prepared afresh would run. pgx forgets a
// cached statement on any error; class 42 keeps that recovery without
// preparing again after every unique violation.
func (s *pipeStmts) invalidate(st *pipeStmt, err error) {
	var pgErr *pgconn.PgError
	if !errors.As(err, &pgErr) || (pgErr.Code != "0A000" && pgErr.Code != "26000" && !strings.HasPrefix(pgErr.Code, "42")) {
		return
	}
	s.forget(st)
}

// forget drops st from the cache, unless it was dropped already, and
// deallocates it with the connection's next request, or, while requests
// built by its name are not yet queued, with the next one after the last
// of them (pipeBuild.release). Nothing counts in st.builds once it is out
// of bySQL, so the flag is set once and only one of the two files the name.
func (s *pipeStmts) forget(st *pipeStmt) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetLocked(st)
}

// forgetLocked is forget with s.mu held.
func (s *pipeStmts) forgetLocked(st *pipeStmt) {
	if s.bySQL[st.sql] == st {
		delete(s.bySQL, st.sql)
		if st.builds.Or(stmtForgotten) == 0 {
			s.dropped = append(s.dropped, st.name)
		}
	}
}

// forgetUnencoded is forget for a statement an argument failed to encode
// for: its next run waits for its preparation (see unencoded). The set
// holds no more than the cache does; past that, a statement's next run
// goes unnamed, as before it was cached.
func (s *pipeStmts) forgetUnencoded(st *pipeStmt) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.forgetLocked(st)
	if len(s.unencoded) >= s.capacity {
		return
	}
	if s.unencoded == nil {
		s.unencoded = map[string]struct{}{}
	}
	s.unencoded[st.sql] = struct{}{}
}

// isUnencoded reports whether sql's last run by name failed to encode an
// argument and it has not been prepared since.
func (s *pipeStmts) isUnencoded(sql string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	_, ok := s.unencoded[sql]
	return ok
}

// deallocations appends a Close for each statement invalidated on b's
// connection since the last request. Its CloseComplete is part of that
// request's answer, which ignores it.
func (b *pipeBuild) deallocations(buf []byte) []byte {
	s := &b.c.stmts
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, name := range s.dropped {
		buf, _ = (&pgproto3.Close{ObjectType: 'S', Name: name}).Encode(buf)
	}
	b.closes = append(b.closes, s.dropped...)
	s.dropped = s.dropped[:0]
	return buf
}
