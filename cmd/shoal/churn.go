package main

import (
	"context"
	"fmt"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// churnWork is the simulated server time of one churn request: none. The
// request's own cost (a TLS record each way through the server) stands for a
// small write, as the InfluxDB and ClickHouse clients made before they
// pooled. A sleep would not do: Go's timers sleep longer than that for
// anything this short.
const churnWork time.Duration = 0

// churnWorkers is the default concurrency of churn.
const churnWorkers = 8

// churnScenario: a new connection per request against a pooled one.
var churnScenario = scenario{
	name:        "churn",
	description: "a new connection per request against a pooled one (InfluxDB's and ClickHouse's clients once opened one per request)",
	plan:        planChurn,
}

func planChurn(e *env) (*plan, error) {
	switch {
	case e.target == nil:
		return planChurnEmbedded(e), nil
	case speaksHTTP(e.target.Kind):
		return planChurnHTTP(e), nil
	case e.target.Kind == targetPostgres:
		return planChurnPostgres(e), nil
	}
	return skipPlan("does not fit the " + e.target.Scheme + ":// target (try --only multiplex)")
}

func planChurnEmbedded(e *env) *plan {
	p := &plan{server: fmt.Sprintf("embedded TLS line server %s, %s", e.servers.Line.Addr(), workNote(churnWork))}
	for _, workers := range e.workersOr(churnWorkers) {
		p.groups = append(p.groups, benchrun.Group{
			Title:   benchrun.Plural(workers, "worker"),
			Workers: workers,
			Cases: []benchrun.Case{
				{
					Name:   "pooled",
					Pooled: true,
					Pool:   &benchrun.PoolConfig{MaxConns: workers},
					Setup: func(ctx context.Context) (*benchrun.Instance, error) {
						pool, waits, err := newLinePool(ctx, e, workers, 0, churnWork, nil)
						if err != nil {
							return nil, err
						}
						return pooledLineInstance(pool, waits), nil
					},
				},
				{
					Name: "new_conn_per_request",
					Setup: func(context.Context) (*benchrun.Instance, error) {
						return newConnLineInstance(e, churnWork), nil
					},
				},
			},
		})
	}
	return p
}

func planChurnHTTP(e *env) *plan {
	req := targetHTTPRequest(e.target)
	p := &plan{server: e.target.Redacted}
	for _, workers := range e.workersOr(churnWorkers) {
		p.groups = append(p.groups, benchrun.Group{
			Title:   benchrun.Plural(workers, "worker"),
			Workers: workers,
			Cases: []benchrun.Case{
				{
					Name: "reused_transport",
					Pool: &benchrun.PoolConfig{MaxConns: workers},
					Setup: func(context.Context) (*benchrun.Instance, error) {
						t, n := tunedTransport(e.clientTLS(), e.dialTimeout, workers)
						return transportInstance(req, t, n), nil
					},
				},
				shoalHTTPCase(req, e.clientTLS(), e.dialTimeout, workers),
				{
					Name: "new_transport_per_request",
					Setup: func(context.Context) (*benchrun.Instance, error) {
						return newTransportPerRequestInstance(req, e.clientTLS(), e.dialTimeout), nil
					},
				},
			},
		})
	}
	return p
}

func planChurnPostgres(e *env) *plan {
	p := &plan{server: e.target.Redacted}
	if newShoalPGX == nil || pgConnectExec == nil {
		p.skip = notLanded("shoalpgx")
		return p
	}
	const sql = "SELECT 1"
	for _, workers := range e.workersOr(churnWorkers) {
		p.groups = append(p.groups, benchrun.Group{
			Title:   benchrun.Plural(workers, "worker") + ", " + sql,
			Workers: workers,
			Cases: []benchrun.Case{
				pgPoolCase(e, "shoalpgx_pool", workers, 0, sql),
				{
					Name: "new_conn_per_query",
					Setup: func(context.Context) (*benchrun.Instance, error) {
						var opened atomic.Int64
						return &benchrun.Instance{
							Op: func(ctx context.Context) (time.Duration, error) {
								opened.Add(1)
								return 0, pgConnectExec(ctx, e.target.Raw, sql)
							},
							ConnsOpened: opened.Load,
						}, nil
					},
				},
			},
		})
	}
	return p
}

// pgPoolCase measures sql on a shoalpgx pool of maxConns connections in
// partitions partitions.
func pgPoolCase(e *env, name string, maxConns, partitions int, sql string) benchrun.Case {
	cfg := &benchrun.PoolConfig{MaxConns: maxConns, Partitions: partitions}
	if partitions > 0 {
		cfg.ConnsPerPartition = maxConns / partitions
	}
	c := benchrun.Case{Name: name, Pooled: true, Pool: cfg}
	if newShoalPGX == nil {
		c.Skip = notLanded("shoalpgx")
		return c
	}
	c.Setup = func(ctx context.Context) (*benchrun.Instance, error) {
		pool, err := newShoalPGX(ctx, pgPoolOptions{
			ConnString: e.target.Raw, MaxConns: maxConns, Partitions: partitions, DialTimeout: e.dialTimeout,
		})
		if err != nil {
			return nil, err
		}
		return pgInstance(pool, sql), nil
	}
	return c
}

// pgInstance runs sql on pool.
func pgInstance(pool pgPool, sql string) *benchrun.Instance {
	return &benchrun.Instance{
		Op:          func(ctx context.Context) (time.Duration, error) { return pool.Exec(ctx, sql) },
		ConnsOpened: pool.ConnsOpened,
		Close: func() error {
			ctx, cancel := context.WithTimeout(context.Background(), closeTimeout)
			defer cancel()
			return pool.Close(ctx)
		},
	}
}
