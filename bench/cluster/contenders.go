package main

import (
	"context"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shoalpool/shoal/internal/pgcount"
	"github.com/shoalpool/shoal/shoalpgx"
)

// A contender is one way for the workers to share the server's connections.
type contender struct {
	name string
	// about is the report's one-line description.
	about string
	// open opens a worker's pool and returns it with its closer.
	open func(ctx context.Context, spec workerSpec) (execer, func(), error)
	// maxConns is a worker's pool size for a cell.
	maxConns func(cfg config) int
	// dsn is where a worker connects.
	dsn func(cfg config) string
	// count is the query that counts the contender's connections at the
	// server, and its argument.
	count func(cfg config) (query, arg string)
	// limit is the most connections the contender should hold at the
	// server.
	limit func(cfg config) int
	// missing says why the contender cannot run with cfg, or "".
	missing func(cfg config) string
}

// countDirect counts the workers' own connections: their application_name,
// over TCP. PgBouncer copies a client's application_name onto the server
// connection it lends, and keeps the server connection up to a minute after
// (scripts/services.sh): without the client_port test those would be
// counted in the next cell too. They come over the Unix socket, so they
// have client_port -1.
const countDirect = pgcount.CountApplication + " AND client_port <> -1"

// contenders are every contender, in the order they run.
var contenders = []contender{
	{
		name:     "static",
		about:    "shoalpgx, each worker's pool sized by hand to budget / workers",
		open:     openShoalpgx,
		maxConns: func(cfg config) int { return cfg.budget / cfg.workers },
		dsn:      func(cfg config) string { return cfg.dsn },
		count:    func(cfg config) (string, string) { return countDirect, cfg.appName },
		limit:    func(cfg config) int { return cfg.budget },
		missing:  func(cfg config) string { return ifEmpty(cfg.dsn, "no PostgreSQL: -dsn or SHOAL_TEST_POSTGRES") },
	},
	{
		name:     "etcd",
		about:    "shoalpgx on one budget kept in etcd (shoaletcd)",
		open:     openEtcdBudget,
		maxConns: func(cfg config) int { return cfg.maxConns },
		dsn:      func(cfg config) string { return cfg.dsn },
		count:    func(cfg config) (string, string) { return countDirect, cfg.appName },
		limit:    func(cfg config) int { return cfg.budget },
		missing: func(cfg config) string {
			if len(cfg.etcd) == 0 {
				return "no etcd: -etcd or SHOAL_TEST_ETCD"
			}
			return ifEmpty(cfg.dsn, "no PostgreSQL: -dsn or SHOAL_TEST_POSTGRES")
		},
	},
	{
		name:     "pgbouncer",
		about:    "pgxpool in each worker, through PgBouncer (transaction pooling; its pool size, 40 in scripts/services.sh, is its own setting, given as -pgbouncer-pool, and -budget does not change it)",
		open:     openPgxpool,
		maxConns: func(cfg config) int { return cfg.maxConns },
		dsn:      func(cfg config) string { return cfg.pgbouncer },
		// PgBouncer's server connections are shoal's backends that came
		// over the Unix socket, whatever application_name they carry now.
		count: func(cfg config) (string, string) { return pgcount.CountSocketUser, cfg.pgbouncerUser },
		limit: func(cfg config) int { return cfg.pgbouncerPool },
		missing: func(cfg config) string {
			if cfg.pgbouncer == "" {
				return "no PgBouncer: -pgbouncer or SHOAL_TEST_PGBOUNCER"
			}
			return ifEmpty(cfg.dsn, "no PostgreSQL to count at: -dsn or SHOAL_TEST_POSTGRES")
		},
	},
}

func ifEmpty(s, why string) string {
	if s == "" {
		return why
	}
	return ""
}

// contenderByName finds a contender.
func contenderByName(name string) (contender, bool) {
	for _, c := range contenders {
		if c.name == name {
			return c, true
		}
	}
	return contender{}, false
}

// openShoalpgx opens a shoalpgx pool of spec.MaxConns connections.
func openShoalpgx(ctx context.Context, spec workerSpec) (execer, func(), error) {
	cfg, err := shoalpgxConfig(spec)
	if err != nil {
		return nil, nil, err
	}
	return startShoalpgx(ctx, cfg)
}

// shoalpgxConfig is a worker's shoalpgx configuration, with its defaults
// but for the size and the application_name.
func shoalpgxConfig(spec workerSpec) (*shoalpgx.Config, error) {
	cfg, err := shoalpgx.ParseConfig(spec.DSN)
	if err != nil {
		return nil, err
	}
	cfg.MaxConns = int32(spec.MaxConns)
	cfg.ConnConfig.RuntimeParams["application_name"] = spec.AppName
	return cfg, nil
}

// startShoalpgx opens the pool and checks that it answers.
func startShoalpgx(ctx context.Context, cfg *shoalpgx.Config) (execer, func(), error) {
	p, err := shoalpgx.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return answering(ctx, p)
}

// openPgxpool opens a pgxpool of spec.MaxConns connections.
func openPgxpool(ctx context.Context, spec workerSpec) (execer, func(), error) {
	cfg, err := pgxpool.ParseConfig(spec.DSN)
	if err != nil {
		return nil, nil, err
	}
	cfg.MaxConns = int32(spec.MaxConns)
	cfg.ConnConfig.RuntimeParams["application_name"] = spec.AppName
	// PgBouncer 1.18 in transaction mode cannot keep a prepared statement
	// for a client; Exec without arguments prepares none anyway, and this
	// keeps anything else from trying.
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, nil, err
	}
	return answering(ctx, p)
}

// pgxPool is an opened pool, shoalpgx's or pgxpool's.
type pgxPool interface {
	execer
	Ping(ctx context.Context) error
	Close()
}

// answering returns p and its Close once p answers a ping; p is closed
// when it does not.
func answering(ctx context.Context, p pgxPool) (execer, func(), error) {
	if err := p.Ping(ctx); err != nil {
		p.Close()
		return nil, nil, fmt.Errorf("ping: %w", err)
	}
	return p, p.Close, nil
}
