package main

import (
	"context"
	"fmt"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// pgPipelineConns is how many connections the pipelined pool and the
// smaller whole-connection pool hold, and pgPipelineWide the larger one's:
// what pipelining promises is that the first does the work of the second.
const (
	pgPipelineConns = 8
	pgPipelineWide  = 32
	pgPipelineDepth = 16 // pool_pipeline: statements in flight on one connection
)

// pgPipelineWorkers are the concurrencies the multiplex scenario runs a
// PostgreSQL target at: more callers than connections, where sharing them
// pays.
var pgPipelineWorkers = []int{32, 128}

// planPipelinePostgres is the multiplex scenario on a postgres:// target:
// shoalpgx with pool_pipeline on 8 connections beside whole connections,
// 8 and 32 of them, each running SELECT 1.
func planPipelinePostgres(e *env) *plan {
	p := &plan{server: e.target.Redacted, description: fmt.Sprintf(
		"statements pipelined on shared connections against whole ones: shoalpgx with pool_pipeline=%d on %d connections beside %d and %d whole connections",
		pgPipelineDepth, pgPipelineConns, pgPipelineConns, pgPipelineWide)}
	if newShoalPGX == nil {
		p.skip = notLanded("shoalpgx")
		return p
	}
	const sql = "SELECT 1"
	for _, w := range e.workersOr(pgPipelineWorkers...) {
		p.groups = append(p.groups, benchrun.Group{
			Title:   benchrun.Plural(w, "worker") + ", " + sql,
			Workers: w,
			Cases: []benchrun.Case{
				pgPipelinedCase(e, fmt.Sprintf("pipelined_%d_conns", pgPipelineConns), pgPipelineConns, sql),
				pgPoolCase(e, fmt.Sprintf("whole_%d_conns", pgPipelineConns), pgPipelineConns, 0, sql),
				pgPoolCase(e, fmt.Sprintf("whole_%d_conns", pgPipelineWide), pgPipelineWide, 0, sql),
			},
		})
	}
	return p
}

// pgPipelinedCase measures sql on a shoalpgx pool of maxConns connections
// with pool_pipeline set. Its waits are the pool's own, as its observer
// hears them: a statement has no acquire for the case to time, and a
// timed zero would say it never waited for room on a shared connection.
func pgPipelinedCase(e *env, name string, maxConns int, sql string) benchrun.Case {
	c := benchrun.Case{Name: name, Pool: &benchrun.PoolConfig{MaxConns: maxConns, MaxStreams: pgPipelineDepth}}
	c.Setup = func(ctx context.Context) (*benchrun.Instance, error) {
		waits := &benchrun.WaitObserver{}
		pool, err := newShoalPGX(ctx, pgPoolOptions{
			ConnString: e.target.Raw, MaxConns: maxConns, DialTimeout: e.dialTimeout, Pipeline: pgPipelineDepth,
			Observer: waits,
		})
		if err != nil {
			return nil, err
		}
		inst := pgInstance(pool, sql)
		inst.Waits = waits
		return inst, nil
	}
	return c
}
