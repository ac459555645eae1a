package stdlib

import (
	"context"
	"database/sql/driver"
	"strconv"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// stmtSeq numbers prepared statements across every connection: a pgx
// connection outlives the database/sql connections it serves, so a name
// must not repeat on it even if a statement was never deallocated.
var stmtSeq atomic.Uint64

// PrepareContext prepares query on the connection under a name of its own,
// so that two database/sql statements with the same text are independent
// and closing one leaves the other. The statement is deallocated when
// database/sql closes it (sql.Stmt.Close, or when it closes the
// connection), or else when the connection closes: database/sql leaves a
// sql.Conn's unclosed statements open when that connection closes.
func (c *Conn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	if err := c.usable(ctx, "prepare"); err != nil {
		return nil, err
	}
	name := "shoalpgx_sql_" + strconv.FormatUint(stmtSeq.Add(1), 10)
	sd, err := c.conn.Prepare(ctx, name, query)
	if err != nil {
		return nil, c.failed(ctx, "prepare", err)
	}
	if c.stmts == nil {
		c.stmts = make(map[string]struct{})
	}
	c.stmts[name] = struct{}{}
	return &sqlStmt{c: c, name: name, sd: sd}, nil
}

// sqlStmt is a statement prepared on one connection. pgx runs it when
// given its name as the query.
type sqlStmt struct {
	c    *Conn
	name string
	sd   *pgconn.StatementDescription
}

// NumInput is the number of parameters the server found in the statement,
// which database/sql checks the arguments against.
func (s *sqlStmt) NumInput() int { return len(s.sd.ParamOIDs) }

// ExecContext runs the statement.
func (s *sqlStmt) ExecContext(ctx context.Context, nv []driver.NamedValue) (driver.Result, error) {
	return s.c.ExecContext(ctx, s.name, nv)
}

// QueryContext runs the statement and returns its rows.
func (s *sqlStmt) QueryContext(ctx context.Context, nv []driver.NamedValue) (driver.Rows, error) {
	return s.c.QueryContext(ctx, s.name, nv)
}

// Exec is ExecContext for driver.Stmt; database/sql calls ExecContext.
func (s *sqlStmt) Exec(v []driver.Value) (driver.Result, error) {
	return s.ExecContext(context.Background(), namedValues(v))
}

// Query is QueryContext for driver.Stmt; database/sql calls QueryContext.
func (s *sqlStmt) Query(v []driver.Value) (driver.Rows, error) {
	return s.QueryContext(context.Background(), namedValues(v))
}

// namedValues numbers positional values as database/sql would.
func namedValues(v []driver.Value) []driver.NamedValue {
	nv := make([]driver.NamedValue, len(v))
	for i, x := range v {
		nv[i] = driver.NamedValue{Ordinal: i + 1, Value: x}
	}
	return nv
}

// Close deallocates the statement. If that fails on a connection that is
// still open, the connection is reported bad, so that it is closed rather
// than given back with a statement left on it.
func (s *sqlStmt) Close() error {
	c := s.c
	if _, open := c.stmts[s.name]; !open {
		return nil // closed already, or deallocated by Conn.Close
	}
	delete(c.stmts, s.name)
	if c.lease == nil || c.conn.IsClosed() {
		return nil // the server dropped the statement with the session
	}
	ctx, cancel := context.WithTimeout(context.Background(), resetTimeout)
	defer cancel()
	if err := c.conn.Deallocate(ctx, s.name); err != nil {
		if c.conn.IsClosed() {
			return nil
		}
		return c.bad("close statement", err)
	}
	return nil
}

// deallocateLeftovers deallocates the statements still prepared on the
// connection as it closes, so that the pool does not get back a session
// holding statements no one can close. A failure marks the connection
// broken, so that Close discards it instead; so is a connection that is
// not clean, which Release discards anyway.
func (c *Conn) deallocateLeftovers() {
	if len(c.stmts) == 0 || !c.clean() {
		c.stmts = nil
		return
	}
	if deallocate(c.conn, c.stmts) != nil {
		c.broken = true
	}
	c.stmts = nil
}

// deallocate deallocates the statements named in stmts on conn, within
// resetTimeout, stopping at the first failure.
func deallocate(conn *pgx.Conn, stmts map[string]struct{}) error {
	ctx, cancel := context.WithTimeout(context.Background(), resetTimeout)
	defer cancel()
	for name := range stmts {
		if err := conn.Deallocate(ctx, name); err != nil {
			return err
		}
	}
	return nil
}
