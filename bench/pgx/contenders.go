package main

import (
	"context"
	"database/sql"
	"fmt"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/shoalpool/shoal/bench/internal/warmup"
	"github.com/shoalpool/shoal/shoalpgx"
)

// A contender is one way of running queries over conns connections.
type contender struct {
	name string
	// conns, when set, is this contender's own number of connections,
	// in place of -conns (the pipeline set compares 8 with 32).
	conns int
	// fixedWorkers: the contender runs one goroutine per connection
	// whatever the worker count (the dedicated ceiling).
	fixedWorkers bool
	open         func(ctx context.Context, dsn string, conns int) (opened, error)
}

// opened is a contender ready to run: a worker per query, and its closer.
type opened struct {
	worker func(q query) worker
	close  func()
	// perCall, when set, is how many statements one call of a worker
	// completes (the pipeline ceiling's depth); otherwise one.
	perCall int
}

// statementsPerCall is how many statements one call of o's worker completes.
func (o opened) statementsPerCall() int {
	return max(o.perCall, 1)
}

var contenders = []contender{
	{name: "dedicated", fixedWorkers: true, open: openDedicated},
	{name: "shoalpgx", open: openShoalpgx(nil)},
	{name: "shoalpgx-fifo", open: openShoalpgx(func(c *shoalpgx.Config) { c.BargeWindow = 0 })},
	{name: "pgxpool", open: openPgxpool},
	{name: "sql", open: openSQL},
	{name: "channel", open: openChannel},
}

// account is what the small-row query reads.
type account struct {
	id      int32
	name    string
	email   string
	balance float64
	created time.Time
}

// pgxQuerier is what the pgx-based contenders share.
type pgxQuerier interface {
	Query(ctx context.Context, sql string, args ...any) (pgx.Rows, error)
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// pgxWorker runs q on the querier picked for the worker.
func pgxWorker(q query, pick func(worker int) pgxQuerier) worker {
	if q.exec {
		return func(ctx context.Context, w, i int) error {
			tag, err := pick(w).Exec(ctx, q.sql, q.args(w, i)...)
			if err == nil && tag.RowsAffected() != 1 {
				err = fmt.Errorf("%s affected %d rows", q.name, tag.RowsAffected())
			}
			return err
		}
	}
	if !q.rows {
		return func(ctx context.Context, w, _ int) error {
			var v int
			return pick(w).QueryRow(ctx, q.sql).Scan(&v)
		}
	}
	return func(ctx context.Context, w, i int) error {
		rows, err := pick(w).Query(ctx, q.sql, q.args(w, i)...)
		if err != nil {
			return err
		}
		if err := oneAccount(rows); err != nil {
			rows.Close() // already closed unless a Scan failed
			return err
		}
		return nil
	}
}

// accountRows are the rows of the small-row query: pgx.Rows and
// *sql.Rows both have these methods.
type accountRows interface {
	Next() bool
	Scan(dest ...any) error
	Err() error
}

// oneAccount reads rows, which must hold one account and no more.
func oneAccount(rows accountRows) error {
	var a account
	n := 0
	for rows.Next() {
		if err := rows.Scan(&a.id, &a.name, &a.email, &a.balance, &a.created); err != nil {
			return err
		}
		n++
	}
	if err := rows.Err(); err != nil {
		return err
	}
	if n != 1 {
		return fmt.Errorf("small-row query returned %d rows", n)
	}
	return nil
}

// args are the arguments of worker's iteration i of q: the worker and the
// iteration for an insert, an account's id for a lookup, none for SELECT 1.
func (q query) args(worker, i int) []any {
	switch {
	case q.exec:
		return []any{worker, i}
	case q.rows:
		return []any{q.accountID(worker, i)}
	}
	return nil
}

// accountID spreads the workers' lookups over the query's accounts.
func (q query) accountID(worker, i int) int {
	ids := q.ids
	if ids == 0 {
		ids = accountIDs
	}
	return (worker*7919+i)%ids + 1
}

func openDedicated(ctx context.Context, dsn string, conns int) (opened, error) {
	cs := make([]*pgx.Conn, conns)
	closeAll := func() {
		for _, c := range cs {
			if c != nil {
				_ = c.Close(context.Background())
			}
		}
	}
	for i := range cs {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			closeAll()
			return opened{}, err
		}
		cs[i] = c
	}
	return opened{
		worker: func(q query) worker {
			return pgxWorker(q, func(w int) pgxQuerier { return cs[w] })
		},
		close: closeAll,
	}, nil
}

// openShoalpgx opens shoalpgx with its defaults, changed by tune when it is
// not nil.
func openShoalpgx(tune func(*shoalpgx.Config)) func(ctx context.Context, dsn string, conns int) (opened, error) {
	return func(ctx context.Context, dsn string, conns int) (opened, error) {
		cfg, err := shoalpgx.ParseConfig(dsn)
		if err != nil {
			return opened{}, err
		}
		cfg.MaxConns = int32(conns)
		cfg.MinIdleConns = int32(conns)
		if tune != nil {
			tune(cfg)
		}
		return startShoalpgx(ctx, cfg, conns)
	}
}

// startShoalpgx opens a shoalpgx pool from cfg and warms its conns
// connections.
func startShoalpgx(ctx context.Context, cfg *shoalpgx.Config, conns int) (opened, error) {
	p, err := shoalpgx.NewWithConfig(ctx, cfg)
	if err != nil {
		return opened{}, err
	}
	return warmed(ctx, p, p.Acquire, conns)
}

func openPgxpool(ctx context.Context, dsn string, conns int) (opened, error) {
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return opened{}, err
	}
	cfg.MaxConns = int32(conns)
	cfg.MinConns = int32(conns)
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return opened{}, err
	}
	return warmed(ctx, p, p.Acquire, conns)
}

// pgxPool is a pgx-based pool: shoalpgx's and pgxpool's.
type pgxPool interface {
	pgxQuerier
	Close()
}

// warmed is p ready to run, once acquire (p's Acquire) has opened and
// pinged its conns connections; p is closed when it cannot.
func warmed[C warmup.PgxConn](ctx context.Context, p pgxPool, acquire func(context.Context) (C, error), conns int) (opened, error) {
	if err := warmup.Pinged(ctx, conns, acquire); err != nil {
		p.Close()
		return opened{}, err
	}
	return onPool(p), nil
}

// onPool is p ready to run, every worker querying p.
func onPool(p pgxPool) opened {
	var qr pgxQuerier = p // converted once, not on every query
	return opened{
		worker: func(q query) worker { return pgxWorker(q, func(int) pgxQuerier { return qr }) },
		close:  p.Close,
	}
}

func openSQL(ctx context.Context, dsn string, conns int) (opened, error) {
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return opened{}, err
	}
	db.SetMaxOpenConns(conns)
	db.SetMaxIdleConns(conns)
	if err := warmup.Hold(ctx, conns, func(ctx context.Context) (func(), error) {
		c, err := db.Conn(ctx)
		if err != nil {
			return nil, err
		}
		return func() { _ = c.Close() }, c.PingContext(ctx)
	}); err != nil {
		_ = db.Close()
		return opened{}, err
	}
	return opened{
		worker: func(q query) worker {
			if !q.rows {
				return func(ctx context.Context, _, _ int) error {
					var v int
					return db.QueryRowContext(ctx, q.sql).Scan(&v)
				}
			}
			return func(ctx context.Context, w, i int) error {
				rows, err := db.QueryContext(ctx, q.sql, q.accountID(w, i))
				if err != nil {
					return err
				}
				defer rows.Close()
				return oneAccount(rows)
			}
		},
		close: func() { _ = db.Close() },
	}, nil
}

// connectPerRequest opens a connection for every query: at most conns at
// once, each running the query once and closing.
func connectPerRequest(dsn string, q query) worker {
	inner := func(c *pgx.Conn) worker { return pgxWorker(q, func(int) pgxQuerier { return c }) }
	return func(ctx context.Context, w, i int) error {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			return err
		}
		defer c.Close(ctx)
		return inner(c)(ctx, w, i)
	}
}
