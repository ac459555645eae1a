package stdlib

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/shoalpgx"
)

// OpenDBFromPool returns a *sql.DB whose connections are leases from pool,
// so that one pool serves both pgx's API and database/sql's (sqlx, sqlc's
// database/sql mode, goose, golang-migrate, gorm), under one MaxConns, as
// pgx's stdlib.OpenDBFromPool does for a *pgxpool.Pool.
//
// It sets the DB's MaxIdleConns to 0: database/sql keeps its own idle
// connections, and each would hold a shoal lease while idle, hidden from
// the pool and starving its direct users. So every connection database/sql
// opens is acquired from pool when database/sql needs it and released to
// pool when database/sql is done with it; the pool's limits, waiting,
// health checks and hooks apply to it as to any lease. Raising MaxIdleConns
// again works, but connections idle in database/sql count as in use in the
// pool's Stats, and are out of reach of its MaxConnLifetime until
// database/sql closes them (see sql.DB.SetConnMaxIdleTime); one the pool
// reset while database/sql held it (Reset, a failover) is closed when
// database/sql next takes it back or uses it.
//
// Closing the DB does not close pool. Close the DB before the pool:
// shoalpgx.Pool.Close waits for every lease, including those the DB holds.
//
// See Conn for how arguments and results are converted, and for reaching
// the *pgx.Conn through sql.Conn.Raw.
func OpenDBFromPool(pool *shoalpgx.Pool, opts ...OptionOpenDB) *sql.DB {
	db := sql.OpenDB(GetPoolConnector(pool, opts...))
	db.SetMaxIdleConns(0)
	return db
}

// GetPoolConnector returns a driver.Connector that acquires each connection
// from pool, for programs that call sql.OpenDB themselves (to wrap the
// connector for tracing, say). Set the DB's MaxIdleConns to 0, as
// OpenDBFromPool does, for the reason given there. It panics if pool is
// nil.
func GetPoolConnector(pool *shoalpgx.Pool, opts ...OptionOpenDB) driver.Connector {
	if pool == nil {
		panic("shoalpgx/stdlib: OpenDBFromPool or GetPoolConnector called with a nil *shoalpgx.Pool")
	}
	c := &sqlConnector{pool: pool}
	for _, o := range opts {
		o(&c.opts)
	}
	return c
}

// An OptionOpenDB configures OpenDBFromPool and GetPoolConnector.
type OptionOpenDB func(*sqlOptions)

// sqlOptions is what the options set.
type sqlOptions struct {
	resetSession func(context.Context, *pgx.Conn) error
}

// OptionResetSession sets a function database/sql calls before it reuses a
// connection it already holds, as pgx stdlib's does. An error discards the
// connection and database/sql takes another.
//
// With OpenDBFromPool's settings database/sql reuses a connection only
// when it hands one straight from a caller to a waiting one (a DB with
// SetMaxOpenConns set); after SetMaxIdleConns, also one from its idle set.
// A connection that comes from the pool does not go through f: for what
// must happen at every hand-over, use the pool's Config.PrepareConn or
// Config.AfterRelease, which see database/sql's leases as they see all
// others.
func OptionResetSession(f func(ctx context.Context, conn *pgx.Conn) error) OptionOpenDB {
	return func(o *sqlOptions) { o.resetSession = f }
}

// sqlConnector opens database/sql connections by acquiring from the pool.
// It has no Close method on purpose: database/sql closes a connector that
// has one when the DB closes, and the pool belongs to its creator.
type sqlConnector struct {
	pool *shoalpgx.Pool
	opts sqlOptions
}

// Connect acquires a connection from the pool. ctx bounds the wait, as in
// shoalpgx.Pool.Acquire, whose errors it returns as they are.
func (c *sqlConnector) Connect(ctx context.Context) (driver.Conn, error) {
	lease, err := c.pool.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	return newConn(lease, &c.opts), nil
}

// Driver returns the driver, which database/sql asks for but which cannot
// open anything by name.
func (c *sqlConnector) Driver() driver.Driver { return sqlDriver{} }

// sqlDriver is the driver.Driver behind the connector. There is no data
// source name to open: connections come only from a Pool, and the driver is
// not registered with sql.Register.
type sqlDriver struct{}

// errOpenByName is Open's answer.
var errOpenByName = errors.New("shoalpgx/stdlib: the database/sql driver opens connections only from a shoalpgx.Pool: use stdlib.OpenDBFromPool(pool), not sql.Open")

// Open always fails: see errOpenByName.
func (sqlDriver) Open(string) (driver.Conn, error) { return nil, errOpenByName }
