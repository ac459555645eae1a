package main

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shoalpool/shoal/bench/internal/warmup"
	"github.com/shoalpool/shoal/shoalpgx"
)

// A contender is a pool, opened on a ConnConfig (the round's
// application_name in it) with conns connections.
type contender struct {
	name string
	open func(ctx context.Context, cc *pgx.ConnConfig, conns int) (pool, error)
}

// pool is an opened contender.
type pool struct {
	exec     func(ctx context.Context, sql string) error
	newConns func() int64 // connections opened so far
	close    func()
}

var contenders = []contender{
	{name: "shoalpgx", open: openShoalpgx(nil)},
	{name: "shoalpgx-fifo", open: openShoalpgx(func(c *shoalpgx.Config) { c.BargeWindow = 0 })},
	{name: "shoalpgx-close", open: openShoalpgx(func(c *shoalpgx.Config) { c.CancelTimeout = 0 })},
	{name: "pgxpool", open: openPgxpool},
}

// openShoalpgx opens shoalpgx with its defaults, changed by tune when it is
// not nil.
func openShoalpgx(tune func(*shoalpgx.Config)) func(ctx context.Context, cc *pgx.ConnConfig, conns int) (pool, error) {
	return func(ctx context.Context, cc *pgx.ConnConfig, conns int) (pool, error) {
		cfg, err := shoalpgx.ParseConfig(cc.ConnString())
		if err != nil {
			return pool{}, err
		}
		cfg.ConnConfig.RuntimeParams["application_name"] = cc.RuntimeParams["application_name"]
		cfg.MaxConns = int32(conns)
		if tune != nil {
			tune(cfg)
		}
		p, err := shoalpgx.NewWithConfig(ctx, cfg)
		if err != nil {
			return pool{}, err
		}
		return warmed(ctx, p, p.Acquire, conns, func() int64 { return p.Stat().Shoal().Dials })
	}
}

func openPgxpool(ctx context.Context, cc *pgx.ConnConfig, conns int) (pool, error) {
	cfg, err := pgxpool.ParseConfig(cc.ConnString())
	if err != nil {
		return pool{}, err
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = cc.RuntimeParams["application_name"]
	cfg.MaxConns = int32(conns)
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return pool{}, err
	}
	return warmed(ctx, p, p.Acquire, conns, func() int64 { return p.Stat().NewConnsCount() })
}

// pgxPool is a pgx-based pool: shoalpgx's and pgxpool's.
type pgxPool interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Close()
}

// warmed is p as an opened pool, once acquire (p's Acquire) has opened and
// pinged its conns connections; p is closed when it cannot.
func warmed[C warmup.PgxConn](ctx context.Context, p pgxPool, acquire func(context.Context) (C, error), conns int, newConns func() int64) (pool, error) {
	if err := warmup.Pinged(ctx, conns, acquire); err != nil {
		p.Close()
		return pool{}, err
	}
	return pool{
		exec:     func(ctx context.Context, sql string) error { _, err := p.Exec(ctx, sql); return err },
		newConns: newConns,
		close:    p.Close,
	}, nil
}
