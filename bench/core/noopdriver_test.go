package core

import (
	"context"
	"database/sql/driver"
	"errors"
	"io"
)

// The no-op driver gives database/sql connections that cost nothing, so a
// benchmark of db.Conn + Conn.Close measures database/sql's pool alone. It
// is used through sql.OpenDB, so nothing is registered globally.

// noopConnector counts the connections database/sql opens through it.
type noopConnector struct {
	connCounter
}

func (c *noopConnector) Connect(context.Context) (driver.Conn, error) {
	c.dials.Add(1)
	return noopDriverConn{}, nil
}

func (*noopConnector) Driver() driver.Driver { return noopDriver{} }

type noopDriver struct{}

func (noopDriver) Open(string) (driver.Conn, error) { return noopDriverConn{}, nil }

type noopDriverConn struct{}

func (noopDriverConn) Prepare(string) (driver.Stmt, error) { return noopStmt{}, nil }
func (noopDriverConn) Close() error                        { return nil }
func (noopDriverConn) Begin() (driver.Tx, error)           { return nil, errNoTx }

var errNoTx = errors.New("noop driver: transactions are not supported")

type noopStmt struct{}

func (noopStmt) Close() error                               { return nil }
func (noopStmt) NumInput() int                              { return 0 }
func (noopStmt) Exec([]driver.Value) (driver.Result, error) { return driver.ResultNoRows, nil }
func (noopStmt) Query([]driver.Value) (driver.Rows, error)  { return noopRows{}, nil }

type noopRows struct{}

func (noopRows) Columns() []string         { return nil }
func (noopRows) Close() error              { return nil }
func (noopRows) Next([]driver.Value) error { return io.EOF }
