package shoalpgx

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// openSettled opens a pool and waits for its shared connections to open,
// so that a pool opened after it does not count their goroutines as its
// own at its cleanup's leak check.
func openSettled(b *testing.B, mutate func(*Config)) *Pool {
	p := newTestPool(b, mutate)
	if p.pipe != nil {
		pgtest.WaitFor(b, 5*time.Second, "the shared connections open", func() bool { return len(p.pipe.conns()) == sharedFloor(p.config) })
	}
	return p
}

// BenchmarkPipelineLone compares one caller's statements with pipelining
// off and on, in one process, alternating blocks of 100 statements so that
// the machine's noise falls on both alike: a lone caller must pay nothing
// for pipelining. Each pool's backend runs where the kernel puts it, on
// the caller's CPU or another, which moves a loopback round trip by
// several times whatever the pool: BenchmarkPipelineLonePlaced holds that
// still. It reports each side's wall time and the process's CPU time per
// statement, and the throughput ratio on/off (higher is better). The
// caller's goroutine is not locked to a thread:
// that would make each of its waits a hand-off between threads, which is
// not what a caller pays.
//
//	go test -run XXX -bench PipelineLone -benchtime 20000x -count 5 ./shoalpgx
func BenchmarkPipelineLone(b *testing.B) {
	off := openSettled(b, func(c *Config) { c.MaxConns = 4 })
	on := openSettled(b, func(c *Config) { c.MaxConns = 4; c.Pipeline = 16 })
	loneAlternating(b, off, on)
}

// loneAlternating runs b's statements from one caller, alternating blocks
// of 100 between off and on, and reports each side's wall time and the
// process's CPU time per statement, and the throughput ratio on/off.
func loneAlternating(b *testing.B, off, on *Pool) {
	ctx := context.Background()
	var n int
	for _, p := range []*Pool{off, on} {
		if err := p.QueryRow(ctx, "select $1::int", 1).Scan(&n); err != nil {
			b.Fatal(err)
		}
	}
	const block = 100
	var wall, cpu [2]time.Duration
	var count [2]int
	side := 0
	for i := 0; b.Loop(); i++ {
		if i%block == 0 {
			side = (i / block) % 2
		}
		p := []*Pool{off, on}[side]
		c0, t0 := processCPU(), time.Now()
		if err := p.QueryRow(ctx, "select $1::int", i).Scan(&n); err != nil || n != i {
			b.Fatal(n, err)
		}
		wall[side] += time.Since(t0)
		cpu[side] += processCPU() - c0
		count[side]++
	}
	if count[0] == 0 || count[1] == 0 {
		return
	}
	per := func(d time.Duration, n int) float64 { return float64(d.Nanoseconds()) / float64(n) }
	b.ReportMetric(per(wall[0], count[0]), "off-ns/stmt")
	b.ReportMetric(per(wall[1], count[1]), "on-ns/stmt")
	b.ReportMetric(per(cpu[0], count[0]), "off-cpu-ns/stmt")
	b.ReportMetric(per(cpu[1], count[1]), "on-cpu-ns/stmt")
	b.ReportMetric(per(wall[0], count[0])/per(wall[1], count[1]), "on/off-throughput")
}

// BenchmarkPipelineStatementCache measures what the per-connection
// statement cache saves a lone pipelined caller: pgx's default mode
// (statements prepared by name on each shared connection) against
// QueryExecModeExec (each statement parsed and planned anew), alternating
// blocks of 100 statements.
//
//	go test -run XXX -bench PipelineStatementCache -benchtime 20000x -count 5 ./shoalpgx
func BenchmarkPipelineStatementCache(b *testing.B) {
	cached := openSettled(b, func(c *Config) { c.MaxConns = 4; c.Pipeline = 16 })
	unnamed := openSettled(b, func(c *Config) {
		c.MaxConns = 4
		c.Pipeline = 16
		c.ConnConfig.DefaultQueryExecMode = pgx.QueryExecModeExec
	})
	ctx := context.Background()
	const sql = "select id, name, $1::int as n from (values (1, 'a'), (2, 'b'), (3, 'c')) t(id, name) where id <= $1::int order by id"
	var wall [2]time.Duration
	var count [2]int
	for i := 0; b.Loop(); i++ {
		side := (i / 100) % 2
		p := []*Pool{unnamed, cached}[side]
		t0 := time.Now()
		rows, err := p.Query(ctx, sql, 3)
		if err != nil {
			b.Fatal(err)
		}
		got, err := pgx.CollectRows(rows, pgx.RowToMap)
		if err != nil || len(got) != 3 {
			b.Fatal(got, err)
		}
		wall[side] += time.Since(t0)
		count[side]++
	}
	if count[0] == 0 || count[1] == 0 {
		return
	}
	per := func(d time.Duration, n int) float64 { return float64(d.Nanoseconds()) / float64(n) }
	b.ReportMetric(per(wall[0], count[0]), "unnamed-ns/stmt")
	b.ReportMetric(per(wall[1], count[1]), "cached-ns/stmt")
	b.ReportMetric(per(wall[0], count[0])/per(wall[1], count[1]), "cached/unnamed-throughput")
}

// BenchmarkPipelineCallers runs `select $1::int` from 8, 32 and 128
// callers against: 8 whole connections (pipelining off, MaxConns 8), 32
// whole connections, and 8 shared connections (pool_pipeline=16 with
// MaxConns 16, of which 8 are shared; the whole ones stay closed, as
// nothing here needs one). Each sub-benchmark opens its pool once per
// count; run with -count and benchstat.
//
//	go test -run XXX -bench PipelineCallers -benchtime 3s -count 5 ./shoalpgx
func BenchmarkPipelineCallers(b *testing.B) {
	configs := []struct {
		name     string
		maxConns int32
		depth    int
	}{
		{"whole-8", 8, 0},
		{"whole-32", 32, 0},
		{"pipelined-8x16", 8, 16},
		{"pipelined-8x4", 8, 4},
	}
	for _, callers := range []int{8, 32, 128} {
		for _, cfg := range configs {
			b.Run(fmt.Sprintf("callers=%d/%s", callers, cfg.name), func(b *testing.B) {
				p := newTestPool(b, func(c *Config) { c.MaxConns = cfg.maxConns; c.Pipeline = cfg.depth })
				ctx := context.Background()
				var wg sync.WaitGroup
				work := make(chan int, 2*callers)
				for range callers {
					wg.Add(1)
					go func() {
						defer wg.Done()
						var n int
						for i := range work {
							if err := p.QueryRow(ctx, "select $1::int", i).Scan(&n); err != nil || n != i {
								b.Error(n, err)
								return
							}
						}
					}()
				}
				for i := 0; b.Loop(); i++ {
					work <- i
				}
				close(work)
				wg.Wait()
			})
		}
	}
}
