package main

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shoalpool/shoal/shoalpgx"
)

// pool is what a worker needs of a contender.
type pool interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Close()
}

// A contender opens a pool on a connection string with its own defaults.
type contender struct {
	name string
	open func(ctx context.Context, cs string) (pool, error)
}

var contenders = []contender{
	{name: "shoalpgx", open: func(ctx context.Context, cs string) (pool, error) {
		return shoalpgx.New(ctx, cs)
	}},
	{name: "pgxpool", open: func(ctx context.Context, cs string) (pool, error) {
		return pgxpool.New(ctx, cs)
	}},
}
