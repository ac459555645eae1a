package main

import (
	"context"
	"fmt"
	"net/url"
	"strconv"
	"sync"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shoalpool/shoal/shoalpgx"
)

// The pipeline set (-set pipeline) asks what shoalpgx's pipelining buys: 8
// pipelined connections beside pools of 8 and 32 whole connections, and
// beside PgBouncer in transaction mode keeping 8 server connections, and
// beside themselves spreading statements instead of filling a connection
// first (spread-8); and
// what pipelining itself reaches here, pgx's own pipeline on 8 connections
// with a goroutine each (ceiling.go), whatever the worker count, and on 4
// with 32 statements in flight, as many as 32 workers keep.
var (
	pipelineQueries = []query{
		{name: "SELECT 1", sql: "select 1"},
		{name: "pk lookup", sql: smallRowSQL, rows: true, ids: 100000},
		{name: "insert", sql: "insert into shoal_bench_events (worker, n) values ($1, $2)", exec: true},
	}
	pipelineContenders = []contender{
		{name: "pgxpool-8", conns: 8, open: openPgxpool},
		{name: "pgxpool-32", conns: 32, open: openPgxpool},
		{name: "shoalpgx-8", conns: 8, open: openShoalpgx(nil)},
		{name: "shoalpgx-32", conns: 32, open: openShoalpgx(nil)},
		{name: "pipelined-8", conns: 8, open: openPipelined},
		{name: "spread-8", conns: 8, open: openSpread},
		{name: "pgbouncer-8", conns: 8, open: openPgbouncer},
		{name: ceilingName, conns: 8, fixedWorkers: true, open: openPgxPipeline},
		{name: inFlight32Name, conns: 4, fixedWorkers: true, open: openInFlight32},
	}
	pipelineWorkers = "1,8,32,128,512"
)

// pipelineDepth is pool_pipeline for the pipelined contender and the
// ceiling's statements per round trip (-pipeline), and pgbouncerDSN
// PgBouncer's address for the pgbouncer contender (-pgbouncer); main sets
// both from the flags.
var (
	pipelineDepth = 16
	pgbouncerDSN  string
)

// pgbouncerClients is how many client connections the pgbouncer contender
// keeps to PgBouncer: enough that PgBouncer, not pgxpool, is what queues
// the callers for its 8 server connections.
const pgbouncerClients = 128

// openPipelined opens shoalpgx with pool_pipeline set, on conns connections
// in all, and grows its shared connections to conns before timing starts
// (growShared): the pipelined pool opens connections as its callers'
// demand grows, and its whole-connection side stays empty.
func openPipelined(ctx context.Context, dsn string, conns int) (opened, error) {
	withPipeline, err := setParam(dsn, "pool_pipeline", strconv.Itoa(pipelineDepth))
	if err != nil {
		return opened{}, err
	}
	cfg, err := shoalpgx.ParseConfig(withPipeline)
	if err != nil {
		return opened{}, err
	}
	cfg.MaxConns = int32(conns)
	p, err := shoalpgx.NewWithConfig(ctx, cfg)
	if err != nil {
		return opened{}, err
	}
	if err := burst(ctx, p, conns*pipelineDepth); err != nil {
		p.Close()
		return opened{}, fmt.Errorf("warm: %w", err)
	}
	if err := growShared(ctx, p, conns); err != nil {
		p.Close()
		return opened{}, fmt.Errorf("warm: %w", err)
	}
	return onPool(p), nil
}

// openSpread is openPipelined with pool_pipeline_fill=0: statements spread
// over the shared connections least-loaded first, never filling one, so
// that beside pipelined-8 it shows what filling buys.
func openSpread(ctx context.Context, dsn string, conns int) (opened, error) {
	spread, err := setParam(dsn, "pool_pipeline_fill", "0")
	if err != nil {
		return opened{}, err
	}
	return openPipelined(ctx, spread, conns)
}

// openPgbouncer opens pgxpool on PgBouncer's database whose server pool
// holds conns connections (scripts/services.sh configures shoal_test_pool8
// with 8). PgBouncer 1.18 in transaction mode keeps no prepared statement
// from one transaction to the next, so the statements go unnamed
// (QueryExecModeExec), one round trip each, as bench/cluster runs them.
func openPgbouncer(ctx context.Context, _ string, conns int) (opened, error) {
	if pgbouncerDSN == "" {
		return opened{}, fmt.Errorf("no PgBouncer: set SHOAL_TEST_PGBOUNCER or -pgbouncer")
	}
	dsn, err := setDatabase(pgbouncerDSN, fmt.Sprintf("shoal_test_pool%d", conns))
	if err != nil {
		return opened{}, err
	}
	cfg, err := pgxpool.ParseConfig(dsn)
	if err != nil {
		return opened{}, err
	}
	cfg.MaxConns = pgbouncerClients
	cfg.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	p, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return opened{}, err
	}
	if err := burst(ctx, p, pgbouncerClients); err != nil {
		p.Close()
		return opened{}, fmt.Errorf("warm: %w", err)
	}
	return onPool(p), nil
}

// burst runs n SELECT 1 at once through q, so that a pool that opens
// connections on demand has opened what the load will ask of it.
func burst(ctx context.Context, q pgxQuerier, n int) error {
	var (
		wg    sync.WaitGroup
		once  sync.Once
		first error
	)
	for range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var v int
			if err := q.QueryRow(ctx, "select 1").Scan(&v); err != nil {
				once.Do(func() { first = err })
			}
		}()
	}
	wg.Wait()
	return first
}

// growShared keeps conns callers running a statement slow enough that none
// fills another's connection (pg_sleep, 20ms) until the pool has conns
// shared connections open, 10s at most. A burst of quick statements fills
// a few connections instead, and the pool would otherwise grow during the
// first timed round of a count of workers that needs more.
func growShared(ctx context.Context, p *shoalpgx.Pool, conns int) error {
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	grown := func() bool { return p.Stat().Pipelined().TotalConns >= conns }
	errs := make(chan error, conns)
	for range conns {
		go func() {
			for !grown() && ctx.Err() == nil {
				if _, err := p.Exec(ctx, "select pg_sleep(0.02)"); err != nil {
					errs <- err
					return
				}
			}
			errs <- nil
		}()
	}
	var first error
	for range conns {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first == nil && !grown() {
		first = fmt.Errorf("%d of %d shared connections open after 10s", p.Stat().Pipelined().TotalConns, conns)
	}
	return first
}

// setParam returns the URL connection string dsn with key set to value.
func setParam(dsn, key, value string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return "", fmt.Errorf("-set pipeline needs a URL connection string (postgres://...)")
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// setDatabase returns the URL connection string dsn naming database db.
func setDatabase(dsn, db string) (string, error) {
	u, err := url.Parse(dsn)
	if err != nil || u.Scheme == "" {
		return "", fmt.Errorf("the PgBouncer address must be a URL connection string (postgres://...)")
	}
	u.Path = "/" + db
	return u.String(), nil
}
