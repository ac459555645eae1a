package shoalpgx

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"

	"github.com/jackc/pgx/v5"
)

// OpenDB returns a *sql.DB whose connections are leases from pool, so that
// one pool serves both pgx's API and database/sql's (sqlx, sqlc's
// database/sql mode, goose, golang-migrate, gorm), under one MaxConns. It is
// the counterpart of pgx's stdlib.OpenDBFromPool.
//
// It sets the DB's MaxIdleConns to 0: database/sql keeps its own idle
// connections, and each would hold a shoal lease while idle, hidden from
// the pool and starving its direct users. So every connection database/sql
// opens is acquired from pool when database/sql needs it and released to
// pool when database/sql is done with it; the pool's limits, waiting,
// health checks and hooks apply to it as to any lease. Raising MaxIdleConns
// again works, but connections idle in database/sql count as in use in the
// pool's Stats, and are out of its reach (MaxConnLifetime, Reset) until
// database/sql closes them (see sql.DB.SetConnMaxIdleTime).
//
// Closing the DB does not close pool. Close the DB before the pool: Pool.Close
// waits for every lease, including those the DB holds.
//
// See SQLConn for how arguments and results are converted, and for
// reaching the *pgx.Conn through sql.Conn.Raw.
func OpenDB(pool *Pool, opts ...OpenDBOption) *sql.DB {
	db := sql.OpenDB(Connector(pool, opts...))
	db.SetMaxIdleConns(0)
	return db
}

// Connector returns a driver.Connector that acquires each connection from
// pool, for programs that call sql.OpenDB themselves (to wrap the
// connector for tracing, say). Set the DB's MaxIdleConns to 0, as OpenDB
// does, for the reason given there. It panics if pool is nil.
func Connector(pool *Pool, opts ...OpenDBOption) driver.Connector {
	if pool == nil {
		panic("shoalpgx: OpenDB or Connector called with a nil *Pool")
	}
	c := &sqlConnector{pool: pool}
	for _, o := range opts {
		o.applyOpenDB(&c.opts)
	}
	return c
}

// An OpenDBOption configures OpenDB and Connector.
type OpenDBOption interface{ applyOpenDB(*sqlOptions) }

// sqlOptions is what the options set.
type sqlOptions struct {
	resetSession func(context.Context, *pgx.Conn) error
}

type openDBOptionFunc func(*sqlOptions)

func (f openDBOptionFunc) applyOpenDB(o *sqlOptions) { f(o) }

// WithResetSession sets a function database/sql calls before it reuses a
// connection it already holds, as pgx stdlib's OptionResetSession does. An
// error discards the connection and database/sql takes another.
//
// With OpenDB's settings database/sql reuses a connection only when it hands
// one straight from a caller to a waiting one (a DB with SetMaxOpenConns
// set); after SetMaxIdleConns, also one from its idle set. A connection that
// comes from the pool does not go through f: for what must happen at every
// hand-over, use the pool's Config.BeforeAcquire or Config.AfterRelease,
// which see database/sql's leases as they see all others.
func WithResetSession(f func(ctx context.Context, conn *pgx.Conn) error) OpenDBOption {
	return openDBOptionFunc(func(o *sqlOptions) { o.resetSession = f })
}

// sqlConnector opens database/sql connections by acquiring from the pool.
// It has no Close method on purpose: database/sql closes a connector that
// has one when the DB closes, and the pool belongs to its creator.
type sqlConnector struct {
	pool *Pool
	opts sqlOptions
}

// Connect acquires a connection from the pool. ctx bounds the wait, as in
// Pool.Acquire, whose errors it returns as they are.
func (c *sqlConnector) Connect(ctx context.Context) (driver.Conn, error) {
	conn, err := c.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return newSQLConn(conn, c), nil
}

// Driver returns the driver, which database/sql asks for but which cannot
// open anything by name.
func (c *sqlConnector) Driver() driver.Driver { return sqlDriver{} }

// sqlDriver is the driver.Driver behind the connector. There is no data
// source name to open: connections come only from a Pool, and the driver is
// not registered with sql.Register.
type sqlDriver struct{}

// errOpenByName is Open's answer.
var errOpenByName = errors.New("shoalpgx: the database/sql driver opens connections only from a Pool: use shoalpgx.OpenDB(pool), not sql.Open")

// Open always fails: see errOpenByName.
func (sqlDriver) Open(string) (driver.Conn, error) { return nil, errOpenByName }
