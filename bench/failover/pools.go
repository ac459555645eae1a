package main

import (
	"context"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shoalpool/shoal/bench/internal/pgurl"
	"github.com/shoalpool/shoal/shoalpgx"
)

// pool is what a worker needs of a contender.
type pool interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
	Close()
}

// A contender opens a pool on a connection string with its own defaults,
// and the pool its readers read through.
type contender struct {
	name  string
	open  func(ctx context.Context, cs string) (pool, error)
	reads func(ctx context.Context, p pool, cs string) (readPool, error)
}

var contenders = []contender{
	{name: "shoalpgx", open: func(ctx context.Context, cs string) (pool, error) {
		return shoalpgx.New(ctx, cs)
	}, reads: func(_ context.Context, p pool, _ string) (readPool, error) {
		return shoalReads{p.(*shoalpgx.Pool).Reads()}, nil
	}},
	{name: "pgxpool", open: func(ctx context.Context, cs string) (pool, error) {
		return pgxpool.New(ctx, cs)
	}, reads: func(ctx context.Context, _ pool, cs string) (readPool, error) {
		// pgxpool routes no reads: the nearest it comes is a pool of its
		// own that prefers a standby when it dials.
		rcs, err := pgurl.WithParams(cs, "target_session_attrs", "prefer-standby")
		if err != nil {
			return nil, err
		}
		return pgxpool.New(ctx, rcs)
	}},
}

// shoalReads is a shoalpgx pool's read pool, which that pool's Close
// closes.
type shoalReads struct{ *shoalpgx.ReadPool }

func (shoalReads) Close() {}
