package main

import (
	"context"
	"fmt"
	"time"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// partitionsWork is the simulated server time of one partitions request:
// none, so that the request is only its round trip through the TLS server
// (tens of microseconds) and checkout itself is a visible part of it. A
// sleep would not do: Go's timers sleep about a millisecond for anything
// shorter.
const partitionsWork time.Duration = 0

// partitionConfig is one row of Ecto's pool_count table.
type partitionConfig struct{ partitions, connsPerPartition int }

// ectoTable is the sweep José Valim ran for Ecto's pool_count: pool_count
// 1..32 with pool_size 32/16/8/4/2/2 (pool_size never below 2, so the last
// row opens 64).
var ectoTable = []partitionConfig{{1, 32}, {2, 16}, {4, 8}, {8, 4}, {16, 2}, {32, 2}}

// partitionsWorkers are the concurrencies the sweep runs at.
var partitionsWorkers = []int{8, 32}

// partitionsScenario: partitions x connections per partition.
var partitionsScenario = scenario{
	name:        "partitions",
	description: "partitions x connections per partition: 1x32, 2x16, 4x8, 8x4 and 16x2 open 32 connections in all, 32x2 opens 64 (Ecto's pool_count table)",
	plan:        planPartitions,
}

// partitionCaseName names a configuration: "4x8" is 4 partitions of 8.
func partitionCaseName(c partitionConfig) string {
	return fmt.Sprintf("%dx%d", c.partitions, c.connsPerPartition)
}

func planPartitions(e *env) (*plan, error) {
	switch {
	case e.target == nil:
	case e.target.Kind == targetPostgres:
		return planPartitionsPostgres(e, "SELECT 1", e.workersOr(partitionsWorkers...)), nil
	default:
		return skipPlan("does not fit the " + e.target.Scheme + ":// target (it needs a postgres:// one)")
	}
	p := &plan{server: fmt.Sprintf("embedded TLS line server %s, %s", e.servers.Line.Addr(), workNote(partitionsWork))}
	bank := newLineBank(e, partitionsWork)
	for _, workers := range e.workersOr(partitionsWorkers...) {
		g := benchrun.Group{Title: benchrun.Plural(workers, "worker"), Workers: workers}
		for _, pc := range ectoTable {
			maxConns := pc.partitions * pc.connsPerPartition
			g.Cases = append(g.Cases, benchrun.Case{
				Name:   partitionCaseName(pc),
				Pooled: true,
				Pool:   &benchrun.PoolConfig{MaxConns: maxConns, Partitions: pc.partitions, ConnsPerPartition: pc.connsPerPartition},
				Setup: func(ctx context.Context) (*benchrun.Instance, error) {
					pool, waits, err := newLinePool(ctx, e, maxConns, pc.partitions, partitionsWork, bank)
					if err != nil {
						return nil, err
					}
					return pooledLineInstance(pool, waits), nil
				},
			})
		}
		p.groups = append(p.groups, g)
	}
	return p, nil
}

// planPartitionsPostgres sweeps Ecto's table on a shoalpgx pool running sql.
func planPartitionsPostgres(e *env, sql string, workers []int) *plan {
	p := &plan{server: e.target.Redacted}
	if newShoalPGX == nil {
		p.skip = notLanded("shoalpgx")
		return p
	}
	for _, w := range workers {
		g := benchrun.Group{Title: benchrun.Plural(w, "worker") + ", " + sql, Workers: w}
		for _, pc := range ectoTable {
			g.Cases = append(g.Cases, pgPoolCase(e, partitionCaseName(pc), pc.partitions*pc.connsPerPartition, pc.partitions, sql))
		}
		p.groups = append(p.groups, g)
	}
	return p
}
