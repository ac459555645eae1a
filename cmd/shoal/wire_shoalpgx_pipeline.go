package main

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/shoalpgx"
)

// shoalPGXPipelined is a shoalpgx pool with pool_pipeline set, run through
// Pool.Exec so that statements share its connections. It has no acquire to
// time: a statement waits, if at all, for room on a shared connection,
// which the pool reports to pgPoolOptions.Observer.
type shoalPGXPipelined struct {
	pool  *shoalpgx.Pool
	dials *atomic.Int64
}

// Exec runs sql on a shared connection.
func (p shoalPGXPipelined) Exec(ctx context.Context, sql string) (time.Duration, error) {
	_, err := p.pool.Exec(ctx, sql)
	return 0, err
}

// ConnsOpened counts the connections the pool has opened, whole and
// shared, by its AfterConnect.
func (p shoalPGXPipelined) ConnsOpened() int64 { return p.dials.Load() }

// Close closes the pool.
func (p shoalPGXPipelined) Close(context.Context) error {
	p.pool.Close()
	return nil
}

// openShoalPGXPipelined opens cfg with pool_pipeline o.Pipeline on
// o.MaxConns connections and runs as many statements at once as they can
// carry, so that the pool, which opens shared connections as its callers'
// demand grows, has opened them before timing starts.
func openShoalPGXPipelined(ctx context.Context, cfg *shoalpgx.Config, o pgPoolOptions) (pgPool, error) {
	cfg.MaxConns = int32(o.MaxConns)
	cfg.Pipeline = o.Pipeline
	cfg.ConnConfig.ConnectTimeout = o.DialTimeout
	if o.Observer != nil {
		cfg.Observer = o.Observer
	}
	dials := new(atomic.Int64)
	next := cfg.AfterConnect
	cfg.AfterConnect = func(ctx context.Context, c *pgx.Conn) error {
		dials.Add(1)
		if next != nil {
			return next(ctx, c)
		}
		return nil
	}
	pool, err := shoalpgx.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, err
	}
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for range o.MaxConns * o.Pipeline {
		wg.Add(1)
		go func() {
			defer wg.Done()
			if _, err := pool.Exec(ctx, "SELECT 1"); err != nil {
				once.Do(func() { first = err })
			}
		}()
	}
	wg.Wait()
	if first != nil {
		pool.Close()
		return nil, fmt.Errorf("warming %d pipelined connections: %w", o.MaxConns, first)
	}
	return shoalPGXPipelined{pool: pool, dials: dials}, nil
}
