package stdlib

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/shoalpgx"
	"github.com/shoalpool/shoal/shoalpgx/internal/bridge"
	"github.com/shoalpool/shoal/shoalpgx/internal/ctxerr"
)

// Conn is one database/sql connection: a lease from the shoalpgx.Pool,
// held from the moment database/sql opens the connection until it closes
// it. Its methods implement database/sql/driver's interfaces and are for
// database/sql to call; programs use it only through sql.Conn.Raw, whose
// callback receives a *Conn, as with pgx's stdlib:
//
//	err := sqlConn.Raw(func(driverConn any) error {
//		conn := driverConn.(*stdlib.Conn).Conn()
//		_, err := conn.CopyFrom(ctx, pgx.Identifier{"t"}, []string{"x"}, src)
//		return err
//	})
//
// Arguments go to pgx as they are (driver.Valuer, pgtype values, slices,
// maps for json, pgx.NamedArgs, pgx.QueryExecMode, ...). PostgreSQL takes
// positional arguments, $1, $2, ...: sql.Named is refused, as is sql.Out.
//
// Result values come to database/sql as:
//
//   - NULL: nil
//   - boolean: bool
//   - smallint, integer, bigint, oid, xid, cid: int64
//   - real, double precision: float64 (a real as the float64 nearest the
//     decimal PostgreSQL prints for it: 1.1, not 1.100000023841858)
//   - bytea: []byte
//   - date, timestamp, timestamp with time zone: time.Time (date and
//     timestamp in UTC); infinity and -infinity as the strings
//     "infinity" and "-infinity"
//   - json, jsonb: their text as []byte, so that they scan into
//     json.RawMessage as well as into string and []byte
//   - everything else (text, varchar, char, name, numeric, uuid, arrays,
//     intervals, ranges, enums, ...): its text form as a string, exactly as
//     PostgreSQL prints it.
//
// So numeric scans losslessly into a string (or pgtype.Numeric, or a
// decimal type that scans strings), uuid into a string or any uuid type
// that scans strings, and an array into a Go slice through
// pgtype.NewMap().SQLScanner(&slice).
type Conn struct {
	lease *shoalpgx.Conn // nil once closed
	conn  *pgx.Conn
	opts  *sqlOptions

	// broken is set when the driver told database/sql the connection is
	// bad (driver.ErrBadConn): Close then closes it instead of giving it
	// back, whatever state pgx thinks it is in.
	broken bool
	// returned is when database/sql last took the connection back
	// (IsValid), for ResetSession's health check.
	returned time.Time
	// stmts names the statements prepared and not yet closed, which Close
	// deallocates: database/sql closes a sql.Conn's statements only when
	// the program does.
	stmts map[string]struct{}
}

func newConn(lease *shoalpgx.Conn, opts *sqlOptions) *Conn {
	return &Conn{lease: lease, conn: lease.Conn(), opts: opts}
}

// Conn returns the pgx connection, for use inside a sql.Conn.Raw callback
// only. Leave it as you found it: outside a transaction, with no rows or
// batch unread (a connection left otherwise is closed, not reused). Do not
// close it.
func (c *Conn) Conn() *pgx.Conn { return c.conn }

// Close gives the connection back to the pool, after deallocating the
// statements still prepared on it. One that is busy, inside a transaction,
// closed by pgx, or that the driver reported bad (or whose statements
// could not be deallocated) is closed instead (shoalpgx.Conn.Release's
// rules, plus the last).
func (c *Conn) Close() error {
	lease := c.lease
	if lease == nil {
		return nil
	}
	c.deallocateLeftovers()
	c.lease = nil
	if c.broken && !c.conn.IsClosed() {
		// Closing it first makes Release discard it: its state is not
		// one the next holder can trust.
		ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
		_ = c.conn.Close(ctx)
		cancel()
	}
	lease.Release()
	return nil
}

// Timeouts of the work the driver does on a context of its own, as the
// pool does its own: closing a connection found bad (Terminate and pgconn's
// cleanup), and the DEALLOCATE or ROLLBACK that leaves a connection clean.
const (
	closeTimeout = 5 * time.Second
	resetTimeout = 5 * time.Second
)

// errRetired is the cause ResetSession gives for a connection the pool
// retired while database/sql held it.
var errRetired = errors.New("the pool retired the connection (a Reset, a failover) while database/sql held it")

// errClosedConn is what a method called after Close reports (database/sql
// never does that).
var errClosedConn = errors.New("shoalpgx/stdlib: database/sql connection used after Close")

// usable checks, before an operation, that the connection can take one:
// driver.ErrBadConn (so that database/sql tries another) if pgx closed it
// or the driver found it bad, and ctx's error if ctx has already ended.
func (c *Conn) usable(ctx context.Context, op string) error {
	if c.lease == nil {
		return errClosedConn
	}
	if c.conn.IsClosed() {
		return c.bad(op, errors.New("pgx closed the connection"))
	}
	if c.broken {
		return c.bad(op, errors.New("an earlier error left the connection unusable"))
	}
	return ctx.Err()
}

// badConnError is driver.ErrBadConn with its cause: database/sql retries on
// another connection when errors.Is(err, driver.ErrBadConn), and shows the
// cause if it gives up.
type badConnError struct {
	op  string
	err error
}

func (e *badConnError) Error() string {
	return "shoalpgx/stdlib: " + e.op + ": connection unusable, discarded: " + e.err.Error()
}

func (e *badConnError) Unwrap() []error { return []error{driver.ErrBadConn, e.err} }

// bad marks the connection broken and returns the error that tells
// database/sql so.
func (c *Conn) bad(op string, err error) error {
	c.broken = true
	return &badConnError{op: op, err: err}
}

// failed turns pgx's error into database/sql's: one that pgx says struck
// before anything reached the server (a write that failed at once) means
// the connection is gone and the statement may run on another; any other
// is the statement's own, and pgx has already closed the connection if
// the error left it unusable. A statement the server cancelled because ctx
// ended returns an error that matches ctx.Err() too (ctxerr.Wrap).
func (c *Conn) failed(ctx context.Context, op string, err error) error {
	if err == nil {
		return nil
	}
	if ctx.Err() == nil && pgconn.SafeToRetry(err) {
		return c.bad(op, err)
	}
	return ctxerr.Wrap(ctx, err)
}

// args gives the arguments to pgx as they are, after opts (pgx query
// options, such as result formats).
func args(nv []driver.NamedValue, opts ...any) []any {
	a := make([]any, 0, len(opts)+len(nv))
	a = append(a, opts...)
	for _, v := range nv {
		a = append(a, v.Value)
	}
	return a
}

// CheckNamedValue accepts every argument as it is, for pgx to encode
// (database/sql would otherwise reduce it to a driver.Value first). It
// refuses what PostgreSQL has no counterpart for: named arguments
// (sql.Named) and output parameters (sql.Out).
func (c *Conn) CheckNamedValue(nv *driver.NamedValue) error {
	if nv.Name != "" {
		return fmt.Errorf("shoalpgx/stdlib: argument %d is named %q: PostgreSQL takes positional arguments ($1, $2, ...); for @name placeholders pass pgx.NamedArgs as the only argument", nv.Ordinal, nv.Name)
	}
	if _, ok := nv.Value.(sql.Out); ok {
		return fmt.Errorf("shoalpgx/stdlib: argument %d is a sql.Out: PostgreSQL has no output parameters; select a function's results instead", nv.Ordinal)
	}
	return nil
}

// ExecContext runs a statement. With no arguments pgx sends it in the
// simple protocol, so a string of several statements (a migration) runs
// as one. Statements run through the lease, not the bare *pgx.Conn, so
// that the pool hears their errors as it hears its own: a write refused
// as read-only is how it learns that its primary was fenced.
func (c *Conn) ExecContext(ctx context.Context, query string, nv []driver.NamedValue) (driver.Result, error) {
	if err := c.usable(ctx, "exec"); err != nil {
		return nil, err
	}
	tag, err := c.lease.Exec(ctx, query, args(nv)...)
	if err != nil {
		return nil, c.failed(ctx, "exec", err)
	}
	return sqlResult(tag.RowsAffected()), nil
}

// QueryContext runs a query and returns its rows. It reads the first row
// before returning, so that the query's error (a syntax error, a missing
// table) comes from here rather than from the first Next, and the columns
// are known in every query mode. Like ExecContext it runs through the
// lease.
func (c *Conn) QueryContext(ctx context.Context, query string, nv []driver.NamedValue) (driver.Rows, error) {
	if err := c.usable(ctx, "query"); err != nil {
		return nil, err
	}
	rows, err := c.lease.Query(ctx, query, args(nv, resultFormats)...)
	if err != nil {
		rows.Close()
		return nil, c.failed(ctx, "query", err)
	}
	r, err := newSQLRows(ctx, c, rows)
	if err != nil {
		return nil, c.failed(ctx, "query", err)
	}
	return r, nil
}

// Ping checks the connection with a round trip. A failure discards the
// connection (driver.ErrBadConn), so that DB.PingContext tries a new one and
// reports whether the server answers, not whether this connection does.
func (c *Conn) Ping(ctx context.Context) error {
	if err := c.usable(ctx, "ping"); err != nil {
		return err
	}
	if err := c.lease.Ping(ctx); err != nil {
		if ctx.Err() != nil {
			return err // the caller gave up: no sign against the connection
		}
		return c.bad("ping", err)
	}
	return nil
}

// IsValid reports whether database/sql may keep the connection for
// another use: open, not reported bad, idle, outside any transaction, not
// retired by the pool (see ResetSession), and without a write refused as
// read-only that the pool has yet to look into (it does at the release,
// which is how it learns of a fenced primary). database/sql calls it each
// time it takes the connection back, which is when the connection's
// idleness starts.
func (c *Conn) IsValid() bool {
	c.returned = time.Now()
	return c.clean() && !bridge.Retired(c.lease) && !bridge.Refused(c.lease)
}

// clean reports whether the connection is open, not reported bad, not busy
// and outside any transaction.
func (c *Conn) clean() bool {
	if c.lease == nil || c.broken || c.conn.IsClosed() {
		return false
	}
	pg := c.conn.PgConn()
	return !pg.IsBusy() && pg.TxStatus() == 'I'
}

// ResetSession prepares a connection database/sql reuses without giving it
// back to the pool (see OptionResetSession): it must not have been retired
// by the pool since it was dialled (a Pool.Reset, a failover's reset), it
// must be clean (IsValid), it gets the pool's own idle checks with the
// pool's settings (the look at the socket after a millisecond of idleness,
// a ping after HealthCheckAfter, neither with HealthCheckAfter 0), then
// the OptionResetSession function. Any failure discards it. A caller whose
// ctx ends during the ping gets ctx's error at once, and the ping goes on,
// as in the pool's acquire (pgx would close a connection whose ping it
// cut short): database/sql lets the connection go, and it goes back to the
// pool, not to database/sql, if the ping answers.
func (c *Conn) ResetSession(ctx context.Context) error {
	if c.lease == nil {
		return errClosedConn
	}
	if bridge.Retired(c.lease) {
		// Not marked broken: given back, the pool closes it as retired.
		return &badConnError{op: "reset session", err: errRetired}
	}
	if !c.clean() {
		return c.bad("reset session", errors.New("the connection is closed, busy or inside a transaction"))
	}
	left, err := bridge.CheckIdle(ctx, c.lease, time.Since(c.returned), c.leftoverTidy())
	if left {
		// The lease is the ping's now, and the pool's again once the
		// ping answers: database/sql must let the connection go without
		// Close giving it back, and the statements went with it.
		c.lease, c.stmts = nil, nil
		return &pingLeftError{err: err}
	}
	if err != nil {
		return c.bad("reset session", err)
	}
	if f := c.opts.resetSession; f != nil {
		if err := f(ctx, c.conn); err != nil {
			return c.bad("reset session", err)
		}
	}
	return nil
}

// pingLeftError is ResetSession's error when ctx ended during the ping:
// driver.ErrBadConn, so that database/sql lets the connection go (its
// Close then does nothing: the ping holds the lease), and ctx's error.
type pingLeftError struct{ err error }

func (e *pingLeftError) Error() string {
	return "shoalpgx/stdlib: reset session: " + e.err.Error() + " during the connection's ping, which goes on; the pool keeps the connection if it answers"
}

func (e *pingLeftError) Unwrap() []error { return []error{driver.ErrBadConn, e.err} }

// leftoverTidy returns what must happen to the connection, should
// ResetSession's ping outlive its caller, before the ping gives it back to
// the pool: the deallocation of the statements still prepared on it, as
// in Close. It is nil when there are none.
func (c *Conn) leftoverTidy() func() {
	if len(c.stmts) == 0 {
		return nil
	}
	conn, stmts := c.conn, c.stmts
	return func() {
		if deallocate(conn, stmts) != nil && !conn.IsClosed() {
			// Closed, the connection is discarded by the release.
			ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
			_ = conn.Close(ctx)
			cancel()
		}
	}
}

// Prepare is PrepareContext without a context; database/sql calls the
// latter.
func (c *Conn) Prepare(query string) (driver.Stmt, error) {
	return c.PrepareContext(context.Background(), query)
}

// Begin is BeginTx with the default options. database/sql calls BeginTx;
// Begin is here because driver.Conn requires it.
func (c *Conn) Begin() (driver.Tx, error) {
	return c.BeginTx(context.Background(), driver.TxOptions{})
}

// sqlResult is an Exec's result: the rows affected, from the command tag.
type sqlResult int64

// errNoLastInsertID is sqlResult's LastInsertId error.
var errNoLastInsertID = errors.New("shoalpgx/stdlib: LastInsertId is not supported: PostgreSQL has no last insert id; use INSERT ... RETURNING id with QueryRow")

func (r sqlResult) LastInsertId() (int64, error) { return 0, errNoLastInsertID }

func (r sqlResult) RowsAffected() (int64, error) { return int64(r), nil }
