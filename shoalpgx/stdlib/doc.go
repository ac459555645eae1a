// Package stdlib is the database/sql driver for a shoalpgx pool: it gives
// code on database/sql (sqlx, sqlc's database/sql mode, goose,
// golang-migrate, gorm) a *sql.DB whose connections come from a
// *shoalpgx.Pool, so that it shares one pool and one MaxConns with code on
// pgx. It is shaped like pgx's stdlib package, under the same names, so
// that moving from pgx's OpenDBFromPool is a change of import path:
//
//	pool, err := shoalpgx.New(ctx, os.Getenv("DATABASE_URL"))
//	if err != nil { ... }
//	defer pool.Close()
//	db := stdlib.OpenDBFromPool(pool)
//	defer db.Close() // before the pool's Close, which waits for the DB's leases
//
// Each database/sql connection is a lease from the moment database/sql
// opens it until it closes it, and OpenDBFromPool sets MaxIdleConns to 0
// so that database/sql keeps no idle leases from the pool's other users.
// The pool's limits, waiting, health checks and hooks apply to these
// leases as to any other, and so does failover: a write refused by a
// fenced primary resets the pool as one through pgx's API does, and a
// connection the pool reset while database/sql held it goes back to the
// pool rather than to database/sql's next caller. A connection given back
// busy, inside a transaction, broken, or reported bad to database/sql is
// closed, never reused. Arguments go to pgx as they are; results come as
// bool, int64, float64, []byte (bytea, and json and jsonb as text),
// time.Time, or the value's text as a string for every other type
// (numeric, uuid, arrays, ...): Conn says which. A sql.Conn.Raw callback
// receives a *Conn, whose Conn method returns the *pgx.Conn. Closing the
// DB does not close the pool.
//
// # What it keeps from pgx's stdlib
//
// OpenDBFromPool, GetPoolConnector (for sql.OpenDB), OptionOpenDB,
// OptionResetSession and Conn, with Conn.Conn, are pgx's names for a
// *pgxpool.Pool, taking a *shoalpgx.Pool. What pgx's package has for
// connections outside a pool (OpenDB and GetConnector from a
// pgx.ConnConfig, the "pgx" driver name for sql.Open, RegisterConnConfig,
// OptionBeforeConnect, OptionAfterConnect) has no counterpart: connections
// come only from a Pool, whose Config has the connect hooks. There is no
// OptionShouldPing either: a connection database/sql reuses without giving
// it back to the pool gets the pool's own idle checks, with the pool's
// HealthCheckAfter (see Conn.ResetSession).
package stdlib
