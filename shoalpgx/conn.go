package shoalpgx

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalpgx/internal/ctxerr"
)

// release gives pc back to the pool at the end of a pool operation (Exec,
// a Query's rows, a Tx, ...); see giveBack. Like every release of a
// connection acquired for a caller, it is traced first, as pgxpool's
// Conn.Release is.
func (pc *pooledConn) release() {
	pc.traceRelease()
	pc.giveBack()
}

// traceRelease tells the pool's ReleaseTracer, if any, of a release.
func (pc *pooledConn) traceRelease() {
	if t := pc.pool.releaseTracer; t != nil {
		t.TraceRelease(pc.pool, TraceReleaseData{Conn: pc.conn})
	}
}

// giveBack gives pc back to the pool in a state the next holder can use:
//
//   - idle, outside a transaction: back to the pool (AfterRelease permitting);
//   - inside a transaction, or in a failed one, and not busy: rolled back in
//     a new goroutine, then back to the pool, or closed if the rollback does
//     not bring it back to idle within resetTimeout;
//   - busy (rows or a batch left unread, a COPY unfinished) or closed by pgx
//     (a fatal error, a context that ended mid-query): closed;
//   - with a refused write still to judge (noteErr): rolled back if need
//     be, its server asked whether it refuses writes, then as above, in a
//     new goroutine.
//
// A connection with a cancel request in flight waits for it first, out of
// the pool (holdForCancel).
func (pc *pooledConn) giveBack() {
	conn := pc.conn
	if conn.IsClosed() {
		pc.lease.Discard()
		return
	}
	if pc.holdForCancel(false) {
		return
	}
	if pc.refused && pc.stale() == 0 {
		// A refused write whose server is still to be asked (noteErr):
		// it may have made the pool stale, so before the checks below.
		go pc.judgeThenGiveBack()
		return
	}
	if why := pc.stale(); why != 0 {
		pc.lease.DiscardFor(why)
		return
	}
	if pc.pool.target == targetReads && !pc.stillReadOnly() {
		// Its holder turned default_transaction_read_only off: the next
		// holder's writes would reach a primary through the read pool.
		pc.lease.DiscardFor(shoal.ReasonRejected)
		return
	}
	pg := conn.PgConn()
	if pg.IsBusy() {
		pc.lease.Discard()
		return
	}
	switch pg.TxStatus() {
	case 'I':
		pc.lease.Release()
	case 'T', 'E':
		go pc.resetAndRelease()
	default:
		pc.lease.Discard()
	}
}

// holdForCancel reports whether pc is held back for a cancel request: a
// request still in flight could cancel the next holder's statement, so
// until it can no longer land the connection stays leased (counting
// against MaxConns) and nobody else gets it; then the goroutine that sent
// it ends the release: giveBack, or releaseUnused for an unused one. A
// connection whose request went unacknowledged is closed here.
func (pc *pooledConn) holdForCancel(unused bool) bool {
	c := pc.cancel
	if c == nil || !c.pending.Load() {
		return false // the release's fast path: no closure to allocate
	}
	then := pc.giveBackAfterCancel
	if unused {
		then = pc.releaseUnusedAfterCancel
	}
	switch c.park(then) {
	case cancelParked:
		return true
	case cancelUnsafe:
		pc.lease.Discard()
		return true
	}
	return false
}

// giveBackAfterCancel ends giveBack once pc's cancel requests settled.
func (pc *pooledConn) giveBackAfterCancel(ok bool) {
	if !ok {
		pc.lease.Discard()
		return
	}
	pc.giveBack()
}

// releaseUnusedAfterCancel ends releaseUnused once pc's cancel requests
// settled.
func (pc *pooledConn) releaseUnusedAfterCancel(ok bool) {
	if !ok {
		pc.lease.Discard()
		return
	}
	pc.releaseUnused()
}

// resetAndRelease rolls back the transaction a connection was released in
// by the pool's own code (a pool-level Begin or SendBatch, whose Tx the
// caller never holds past the release), then releases it, or discards it if
// that did not leave it idle.
func (pc *pooledConn) resetAndRelease() {
	ctx, cancel := context.WithTimeout(context.Background(), resetTimeout)
	defer cancel()
	err := pc.conn.PgConn().Exec(ctx, "rollback").Close()
	if err != nil || pc.conn.IsClosed() || pc.conn.PgConn().IsBusy() || pc.conn.PgConn().TxStatus() != 'I' {
		pc.lease.Discard()
		return
	}
	if pc.holdForCancel(false) {
		return
	}
	pc.lease.Release()
}

// Conn is a connection acquired from a Pool. Use it, then call Release.
// Its methods must not be called after Release, except Release itself.
type Conn struct {
	pc *pooledConn // nil after Release
	p  *Pool
}

// newConn hands out a fresh Conn for pc from its block.
func (pc *pooledConn) newConn(p *Pool) *Conn {
	if len(pc.conns) == 0 {
		pc.conns = make([]Conn, wrapperBlock)
	}
	c := &pc.conns[0]
	pc.conns = pc.conns[1:]
	c.pc, c.p = pc, p
	return c
}

// Release returns the connection to the pool. One released inside a
// transaction (begun or failed), busy (with rows or a batch not closed) or
// broken is closed, never handed out again, as in pgxpool: a pgx.Tx begun
// on it may outlive the Release, and its late Commit or Rollback must not
// reach the next holder's session. Calling Release again does nothing.
func (c *Conn) Release() {
	if c.pc == nil {
		return
	}
	pc := c.pc
	c.pc = nil
	pc.releaseByCaller()
}

// releaseByCaller releases a connection its holder gives back. Inside a
// transaction it is closed, not rolled back for reuse, as pgxpool does: a
// pgx.Tx from Conn.Begin outlives the Release (a deferred Rollback often
// runs after a deferred Release), and on a reused connection its late
// Rollback or Commit would end the next holder's transaction instead of
// failing.
func (pc *pooledConn) releaseByCaller() {
	pc.traceRelease()
	if pc.inTransaction() {
		pc.lease.Discard()
		return
	}
	pc.giveBack()
}

// releaseUnused gives back a connection that the pool acquired but its
// caller never got: PrepareConn kept it but failed the acquire, or its
// ping ended after the caller left. As in pgxpool, neither AfterRelease
// nor the ReleaseTracer hears of it. One that is not idle and ready (a
// PrepareConn that left a transaction open, say) is closed instead.
func (pc *pooledConn) releaseUnused() {
	pg := pc.conn.PgConn()
	if pc.conn.IsClosed() || pg.IsBusy() || pg.TxStatus() != 'I' {
		pc.lease.Discard()
		return
	}
	if pc.holdForCancel(true) {
		return
	}
	pc.unused = pc.pool.config.AfterRelease != nil
	pc.lease.Release()
}

// Hijack takes the connection out of the pool: the caller owns it and must
// close it. It panics on a released or hijacked Conn, as pgxpool's does.
// Under a Budget that fences (see the package doc), it first lets go of
// the connection's lock on its slot, which goes back to the budget with
// its permit: one round trip, at most fenceQueryTimeout.
func (c *Conn) Hijack() *pgx.Conn {
	if c.pc == nil {
		panic("shoalpgx: Hijack of a released or hijacked connection")
	}
	pc := c.pc
	c.pc = nil
	// The slot goes back to the budget with the permit below: kept, its
	// lock would refuse every connection given the slot after it, here
	// or in another process, for as long as this one lives.
	pc.unfence()
	// The core forgets it without closing it (no Close, no BeforeClose,
	// not counted as closed) and frees its place in MaxConns and its
	// budget permit at once.
	if _, err := pc.lease.Hijack(); err != nil {
		panic("shoalpgx: Hijack: " + err.Error())
	}
	pc.forget()
	return pc.conn
}

// Host returns where the connection is: the host:port of the connection
// string it was dialled to, and the role its server had when the pool last
// looked (RolePrimary, RoleReadOnly, RoleStandby; RoleUnknown when the pool
// never asked, as with a single host and no target_session_attrs).
func (c *Conn) Host() (addr, role string) {
	addr, role = c.pc.host.addr, RoleUnknown
	if c.pc.judged {
		role = c.pc.role.name()
	}
	return addr, role
}

// Conn returns the underlying pgx connection.
func (c *Conn) Conn() *pgx.Conn { return c.pc.conn }

// Exec runs sql on the connection. See pgx.Conn.Exec.
func (c *Conn) Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error) {
	tag, err := c.pc.conn.Exec(ctx, sql, args...)
	err = ctxerr.Wrap(ctx, err)
	c.pc.noteErr(ctx, err)
	return tag, err
}

// Query runs sql on the connection. See pgx.Conn.Query.
func (c *Conn) Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error) {
	rows, err := c.pc.conn.Query(ctx, sql, args...)
	return c.pc.wrapRows(ctx, rows, err, true)
}

// wrapRows wraps the rows of a query on pc that pc's holder reads, and its
// error, so that both match the query's context once it ended; with note
// set, the query's error goes to pc.noteErr.
func (pc *pooledConn) wrapRows(ctx context.Context, rows pgx.Rows, err error, note bool) (pgx.Rows, error) {
	err = ctxerr.Wrap(ctx, err)
	if err != nil && note {
		pc.noteErr(ctx, err)
		note = false // heard once: closing the rows does not pass it on again
	}
	if rows == nil {
		return errRows{err: err}, err
	}
	return pc.newRows(ctx, rows, false, note), err
}

// QueryRow runs sql on the connection. See pgx.Conn.QueryRow.
func (c *Conn) QueryRow(ctx context.Context, sql string, args ...any) pgx.Row {
	return c.pc.newRow(ctx, c.pc.conn.QueryRow(ctx, sql, args...), false, true)
}

// SendBatch sends b on the connection. See pgx.Conn.SendBatch.
func (c *Conn) SendBatch(ctx context.Context, b *pgx.Batch) pgx.BatchResults {
	return c.pc.heldBatch(ctx, c.pc.conn.SendBatch(ctx, b), b, false)
}

// CopyFrom copies rows into a table on the connection. See pgx.Conn.CopyFrom.
func (c *Conn) CopyFrom(ctx context.Context, table pgx.Identifier, columns []string, src pgx.CopyFromSource) (int64, error) {
	n, err := c.pc.conn.CopyFrom(ctx, table, columns, src)
	err = ctxerr.Wrap(ctx, err)
	c.pc.noteErr(ctx, err)
	return n, err
}

// Begin starts a transaction on the connection. See pgx.Conn.Begin.
func (c *Conn) Begin(ctx context.Context) (pgx.Tx, error) {
	return c.BeginTx(ctx, pgx.TxOptions{})
}

// BeginTx starts a transaction with options on the connection. See
// pgx.Conn.BeginTx. The transaction does not release the connection when
// it ends: the Conn's holder does.
func (c *Conn) BeginTx(ctx context.Context, opts pgx.TxOptions) (pgx.Tx, error) {
	t, err := c.pc.conn.BeginTx(ctx, opts)
	if err != nil {
		return nil, ctxerr.Wrap(ctx, err)
	}
	return &Tx{t: t, conn: c.pc, readOnly: beginsReadOnly(opts)}, nil
}

// Ping checks that the connection and the server answer. See pgx.Conn.Ping.
func (c *Conn) Ping(ctx context.Context) error { return ctxerr.Wrap(ctx, c.pc.ping(ctx)) }
