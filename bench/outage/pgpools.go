package main

import (
	"context"
	"fmt"
	"log/slog"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shoalpool/shoal/bench/internal/warmup"
	"github.com/shoalpool/shoal/shoalpgx"
)

// pgPool is what the cases need of a PostgreSQL pool; shoalpgx.Pool and
// pgxpool.Pool both have it.
type pgPool interface {
	Ping(ctx context.Context) error
	QueryRow(ctx context.Context, sql string, args ...any) pgx.Row
	Close()
}

// pgOptions are what a case sets on a pool beside its connection string.
type pgOptions struct {
	dial    dialFunc     // every connection's dial, under pgconn (Config.DialFunc)
	log     *dialLog     // when set, told of every session's start (pgconn's AfterConnect)
	logger  *slog.Logger // the pool's own logger, for a pool that takes one
	appName string       // application_name, which pg_stat_activity shows
}

// A pgContender opens a pool on a connection string, its settings from the
// string's pool_ keys and its own defaults for the rest.
type pgContender struct {
	name string
	// logs says whether the pool takes a logger (pgOptions.logger).
	logs bool
	open func(ctx context.Context, cs string, o pgOptions) (pgPool, error)
	// warm holds n connections of p at once, pings each and releases
	// them, so that a run starts on a full pool.
	warm func(ctx context.Context, p pgPool, n int) error
}

var pgContenders = []pgContender{
	{name: "shoalpgx", logs: true, open: func(ctx context.Context, cs string, o pgOptions) (pgPool, error) {
		cfg, err := shoalpgx.ParseConfig(cs)
		if err != nil {
			return nil, err
		}
		setConn(cfg.ConnConfig, o)
		cfg.Logger = o.logger
		p, err := shoalpgx.NewWithConfig(ctx, cfg)
		if err != nil {
			return nil, err // not a nil *Pool in a non-nil pgPool
		}
		return p, nil
	}, warm: func(ctx context.Context, p pgPool, n int) error {
		return warmup.Pinged(ctx, n, p.(*shoalpgx.Pool).Acquire)
	}},
	{name: "pgxpool", open: func(ctx context.Context, cs string, o pgOptions) (pgPool, error) {
		// pgxpool has no logger of its own: what it would say, it says to
		// no one.
		cfg, err := pgxpool.ParseConfig(cs)
		if err != nil {
			return nil, err
		}
		setConn(cfg.ConnConfig, o)
		p, err := pgxpool.NewWithConfig(ctx, cfg)
		if err != nil {
			return nil, err
		}
		return p, nil
	}, warm: func(ctx context.Context, p pgPool, n int) error {
		return warmup.Pinged(ctx, n, p.(*pgxpool.Pool).Acquire)
	}},
}

// eachPG runs once for each of pgContenders in turn, on the shared
// server; the first error ends it, prefixed with the pool's name.
func eachPG[R any](once func(c pgContender) (R, error)) ([]R, error) {
	var runs []R
	for _, c := range pgContenders {
		r, err := once(c)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", c.name, err)
		}
		runs = append(runs, r)
	}
	return runs, nil
}

// setConn puts o's dial and application_name on cc.
func setConn(cc *pgx.ConnConfig, o pgOptions) {
	if o.dial != nil {
		cc.DialFunc = pgconn.DialFunc(o.dial)
	}
	if o.log != nil {
		own := cc.AfterConnect
		cc.AfterConnect = func(ctx context.Context, pc *pgconn.PgConn) error {
			if own != nil {
				if err := own(ctx, pc); err != nil {
					return err
				}
			}
			return o.log.session(ctx, pc)
		}
	}
	if o.appName != "" {
		cc.RuntimeParams["application_name"] = o.appName
	}
}

// closeWait bounds the wait for a pool's or transport's Close, so that a
// pool stuck closing cannot stall the program; the report says so.
const closeWait = 15 * time.Second

// closeBounded runs closeFn and waits up to closeWait for it; false means
// it had not returned by then (it goes on in the background).
func closeBounded(closeFn func()) bool { return within(closeWait, closeFn) }

// password returns the password of the URL connection string cs, or "".
func password(cs string) string {
	u, err := url.Parse(cs)
	if err != nil || u.User == nil {
		return ""
	}
	p, _ := u.User.Password()
	return p
}
