package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/shoalpool/shoal/bench/internal/cpustat"
	"github.com/shoalpool/shoal/internal/pgcount"
)

// config is one run of the benchmark, from the flags.
type config struct {
	dsn           string        // PostgreSQL, for the direct contenders and the checker
	pgbouncer     string        // PgBouncer in front of the same database
	pgbouncerUser string        // the role PgBouncer logs into PostgreSQL as
	pgbouncerPool int           // PgBouncer's pool size: its limit at the server
	etcd          []string      // etcd endpoints for the etcd contender's budget
	etcdMin       int           // each etcd member's minimum share
	etcdIdle      time.Duration // shoaletcd's IdleTime; 0 for its default
	workers       int
	goroutines    int // per worker on the uniform load and the cold ones of skewed-capped
	skew          int // skewed-capped: the hot worker runs skew times goroutines
	hot, cold     int // skewed: the hot worker's goroutines and each other worker's
	maxConns      int // a worker's pool size, but in the static split
	budget        int // the connections all workers may hold together
	duration      time.Duration
	warmup        time.Duration
	sleepShare    float64
	pause         time.Duration // how long a sleeping query sleeps
	loads         []string
	contenders    []string
	appName       string // of the workers' connections
	profileDir    string // where workers write CPU profiles, or ""
	// rounds is how many times every load runs its contenders, their
	// order reversed in every other round (roundOrder).
	rounds int
}

// profilePath is where worker w of a cell writes its CPU profile, or "".
// Over several rounds the name carries the round, so that one round's
// profiles do not overwrite another's.
func (cfg config) profilePath(load, contender string, round, w int) string {
	if cfg.profileDir == "" {
		return ""
	}
	if cfg.rounds > 1 {
		return filepath.Join(cfg.profileDir, fmt.Sprintf("%s-%s-r%d-w%d.pprof", load, contender, round, w))
	}
	return filepath.Join(cfg.profileDir, fmt.Sprintf("%s-%s-w%d.pprof", load, contender, w))
}

// roundLabel names round r in the runner's messages: "" when there is one
// round, so that a single run's read as they always have.
func (cfg config) roundLabel(r int) string {
	if cfg.rounds > 1 {
		return fmt.Sprintf("round %d, ", r)
	}
	return ""
}

// The loads. uniform: every worker runs goroutines. skewed: worker 0 runs
// hot goroutines (32), each other worker cold (4), so that the hot
// worker's demand is above its static share (budget/workers, 10) and the
// cold ones' below it: a budget can move the cold workers' idle share to
// the hot one, which a static split cannot. skewed-capped: worker 0 with
// skew times the others' goroutines (4 x 64); every worker's demand sits
// at its pool's cap (-maxconns 32, above the static share), so max-min
// fairness gives each the static share and a budget has nothing to move.
const (
	loadUniform      = "uniform"
	loadSkewed       = "skewed"
	loadSkewedCapped = "skewed-capped"
)

// goroutinesFor is worker w's goroutine count under load.
func (cfg config) goroutinesFor(load string, w int) int {
	switch {
	case load == loadSkewed && w == 0:
		return cfg.hot
	case load == loadSkewed:
		return cfg.cold
	case load == loadSkewedCapped && w == 0:
		return cfg.skew * cfg.goroutines
	}
	return cfg.goroutines
}

// cell is one contender under one load.
type cell struct {
	load, contender string
	round           int    // from 1; every load runs its contenders once a round
	skipped         string // why it did not run, or ""
	queries         uint64
	errors          uint64
	firstError      string
	qps             float64
	perWorker       []float64 // q/s
	perWorkerP99    []time.Duration
	p50, p99        time.Duration
	server          pgcount.Report // the connections counted at the server
	limit           int            // the most the contender should hold there
	timelines       [][]statSample // per worker, from go to the window's end
	idle            float64        // the machine's idle CPU share in the window, or -1
	etcdLeftover    int            // etcd keys (but size) the workers left; etcd contender only
	// workerCPU is the CPU time the worker processes used, start to exit:
	// per query, the client side's cost, which a busy shared machine
	// changes far less than it changes q/s.
	workerCPU  time.Duration
	allQueries uint64 // the workers' queries, warm-up included
	// perWorkerAll is each worker's allQueries: whether a worker got any
	// query through at all, which a loaded machine can keep out of a short
	// measured window.
	perWorkerAll []uint64
}

// run runs every load with every contender, one cell after the other,
// cfg.rounds times: each round runs every load, the contenders in
// roundOrder. Rounds go over all the loads in turn, rather than repeat one
// load before the next, so that a stretch of the shared machine's load
// falls on one round of every load and not on all of one load's.
func run(ctx context.Context, cfg config) ([]cell, error) {
	var cells []cell
	for r := 1; r <= max(cfg.rounds, 1); r++ {
		for _, load := range cfg.loads {
			for _, name := range roundOrder(cfg.contenders, r) {
				c, ok := contenderByName(name)
				if !ok {
					return cells, fmt.Errorf("no contender %q", name)
				}
				if why := c.missing(cfg); why != "" {
					fmt.Fprintf(os.Stderr, "%s%-12s %-10s skipped: %s\n", cfg.roundLabel(r), load, name, why)
					cells = append(cells, cell{round: r, load: load, contender: name, skipped: why})
					continue
				}
				res, err := runCell(ctx, cfg, c, load, r)
				if ctx.Err() != nil { // the workers died of it; say so, not how
					return cells, fmt.Errorf("%s%s, %s load: %w", cfg.roundLabel(r), name, load, ctx.Err())
				}
				if err != nil {
					return cells, fmt.Errorf("%s%s, %s load: %w", cfg.roundLabel(r), name, load, err)
				}
				shares := ""
				if name != "pgbouncer" {
					shares = "  shares " + perWorker(summarize(res, cfg.warmup, cfg.duration), func(s shareSummary) string { return fmt.Sprintf("%.1f", s.share) })
				}
				fmt.Fprintf(os.Stderr, "%s%-12s %-10s %8.0f q/s  p50 %s  p99 %s  errors %d  most at server %d (limit %d)  CPU idle %s  workers' CPU %s%s\n",
					cfg.roundLabel(r), load, name, res.qps, ms(res.p50), ms(res.p99), res.errors, res.server.Max, res.limit, percent(res.idle), res.cpuPerQuery(), shares)
				cells = append(cells, res)
			}
		}
	}
	return cells, nil
}

// settle waits (10s at most) until the server holds none of the
// contender's connections, so that a cell is not charged with the last
// one's stragglers: a closed pool's backends take a moment to exit.
func settle(ctx context.Context, cfg config, query, arg string) {
	chk, err := pgcount.Start(ctx, pgcount.Config{ConnString: cfg.dsn, Query: query, Arg: arg})
	if err != nil {
		return // the cell's own checker reports the error
	}
	defer chk.Stop()
	for deadline := time.Now().Add(10 * time.Second); chk.Last().Count > 0 && time.Now().Before(deadline); {
		time.Sleep(50 * time.Millisecond)
	}
}

// runCell runs the workers of one contender under one load in round r,
// counting the connections at the server from before the first worker
// starts until the last has exited.
func runCell(ctx context.Context, cfg config, c contender, load string, r int) (res cell, err error) {
	res = cell{round: r, load: load, contender: c.name, idle: -1}
	query, arg := c.count(cfg)
	res.limit = c.limit(cfg)
	if query == countDirect {
		settle(ctx, cfg, query, arg)
	}
	chk, err := pgcount.Start(ctx, pgcount.Config{ConnString: cfg.dsn, Query: query, Arg: arg, Limit: res.limit})
	if err != nil {
		return res, err
	}
	checking := true
	defer func() {
		if checking {
			chk.Stop()
		}
	}()
	budget := budgetSpec{Endpoints: cfg.etcd, Size: cfg.budget, Min: cfg.etcdMin, IdleTime: cfg.etcdIdle,
		Name: fmt.Sprintf("bench-cluster-%s-%d-%d", load, os.Getpid(), time.Now().UnixNano())}
	if c.name == "etcd" {
		// Connected before any worker starts, so that a budget is never
		// created that the runner could not delete.
		cleanup, err := newEtcdCleanup(budget)
		if err != nil {
			return res, err
		}
		// Runs after the deferred ends of the workers below: deferred
		// calls run last first.
		defer func() {
			left, cerr := cleanup.finish()
			res.etcdLeftover = left
			if cerr != nil {
				err = errors.Join(err, cerr)
			}
		}()
	}
	var children []*child
	defer func() {
		for _, ch := range children {
			_ = ch.end()
		}
	}()
	for w := range cfg.workers {
		ch, err := startChild(ctx, workerSpec{
			Index: w, Contender: c.name, DSN: c.dsn(cfg), MaxConns: c.maxConns(cfg), AppName: cfg.appName,
			Goroutines: cfg.goroutinesFor(load, w), SleepShare: cfg.sleepShare, Pause: cfg.pause,
			Warmup: cfg.warmup, Duration: cfg.duration, Budget: budget,
			Profile: cfg.profilePath(load, c.name, r, w),
		})
		if err != nil {
			return res, err
		}
		children = append(children, ch)
	}
	for _, ch := range children {
		if line, err := ch.expect(time.Minute); err != nil || line != lineReady {
			return res, errors.Join(fmt.Errorf("worker %d not ready (said %q)", ch.index, line), err)
		}
	}
	// All at once, so the measured windows overlap.
	for _, ch := range children {
		if _, err := fmt.Fprintln(ch.stdin, lineGo); err != nil {
			return res, fmt.Errorf("worker %d: %w", ch.index, err)
		}
	}
	// The machine's idle share over the measured window: on a small
	// machine shared by the workers, PostgreSQL and etcd, a cell with
	// none left is CPU-bound, and connections cannot buy throughput.
	windowCPU := make(chan float64, 1)
	cpuCtx, cpuCancel := context.WithCancel(ctx)
	defer cpuCancel()
	go func() {
		ctx := cpuCtx
		select {
		case <-time.After(cfg.warmup):
		case <-ctx.Done():
			windowCPU <- -1
			return
		}
		iv := cpustat.Start()
		select {
		case <-time.After(cfg.duration):
			windowCPU <- iv.IdleShare()
		case <-ctx.Done():
			windowCPU <- -1
		}
	}()
	var total histogram
	for _, ch := range children {
		line, err := ch.expect(cfg.warmup + cfg.duration + time.Minute)
		if err != nil {
			return res, err
		}
		var r workerResult
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			return res, fmt.Errorf("worker %d's result: %w", ch.index, err)
		}
		total.merge(&r.Latency)
		res.queries += r.Queries
		res.allQueries += r.AllQueries
		res.perWorkerAll = append(res.perWorkerAll, r.AllQueries)
		res.errors += r.Errors
		if res.firstError == "" {
			res.firstError = r.FirstError
		}
		res.perWorker = append(res.perWorker, float64(r.Queries)/cfg.duration.Seconds())
		res.perWorkerP99 = append(res.perWorkerP99, r.Latency.quantile(0.99))
		res.timelines = append(res.timelines, r.Timeline)
	}
	res.idle = <-windowCPU
	for _, ch := range children {
		if err := ch.end(); err != nil {
			return res, fmt.Errorf("worker %d: %w", ch.index, err)
		}
		res.workerCPU += ch.cpu()
	}
	res.server, checking = chk.Stop(), false
	res.qps = float64(res.queries) / cfg.duration.Seconds()
	res.p50, res.p99 = total.quantile(0.50), total.quantile(0.99)
	return res, nil
}

// cpuPerQuery is the workers' CPU time per query, in µs: all their CPU
// time, start-up included, over all their queries, warm-up included.
func (c cell) cpuPerQuery() string {
	if c.allQueries == 0 || c.workerCPU == 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f µs/q", float64(c.workerCPU.Microseconds())/float64(c.allQueries))
}
