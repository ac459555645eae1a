package main

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/shoalpool/shoal/bench/internal/cpuprofile"
)

// execer is what a worker needs of a pool: shoalpgx and pgxpool both have it.
type execer interface {
	Exec(ctx context.Context, sql string, args ...any) (pgconn.CommandTag, error)
}

// The two queries of the mix. Exec without arguments goes over the simple
// protocol in pgx, one round trip, the same for every contender and safe
// through PgBouncer's transaction pooling, which has no prepared
// statements to offer.
const (
	querySelect = "SELECT 1"
)

// querySleep is the query that holds its connection for pause at the
// server: SELECT pg_sleep(0.001) for a millisecond.
func querySleep(pause time.Duration) string {
	return fmt.Sprintf("SELECT pg_sleep(%g)", pause.Seconds())
}

// workerMain runs one worker from the spec in $SHOAL_BENCH_CLUSTER_WORKER
// and returns the process's exit code. It exits on its own when its stdin
// closes, so a runner that dies leaves no worker running.
func workerMain(specJSON string) int {
	var spec workerSpec
	if err := json.Unmarshal([]byte(specJSON), &spec); err != nil {
		fmt.Fprintf(os.Stderr, "worker: bad spec: %v\n", err)
		return 2
	}
	if err := runWorker(spec, os.Stdin, os.Stdout); err != nil {
		fmt.Fprintf(os.Stderr, "worker %d (%s): %v\n", spec.Index, spec.Contender, err)
		return 1
	}
	return 0
}

// runWorker opens the pool, says ready, waits for go, runs the load and
// writes the result.
func runWorker(spec workerSpec, in *os.File, out *os.File) error {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	c, ok := contenderByName(spec.Contender)
	if !ok {
		return fmt.Errorf("contender %q is not in this binary", spec.Contender)
	}
	openCtx, openCancel := context.WithTimeout(ctx, 30*time.Second)
	pool, closePool, err := c.open(openCtx, spec)
	openCancel()
	if err != nil {
		return fmt.Errorf("opening the pool: %w", err)
	}
	defer closePool()

	lines := bufio.NewScanner(in)
	fmt.Fprintln(out, lineReady)
	if !lines.Scan() || lines.Text() != lineGo {
		return fmt.Errorf("the runner went away before go")
	}
	// After go, a closed stdin means the runner died: stop at once.
	go func() {
		for lines.Scan() {
		}
		cancel()
	}()
	if spec.Profile != "" {
		stopProfile, err := cpuprofile.Start(spec.Profile)
		if err != nil {
			return err
		}
		defer stopProfile()
	}
	res := load(ctx, pool, spec)
	res.Index = spec.Index
	b, err := json.Marshal(res)
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(out, "%s\n", b)
	return err
}

// load runs spec.Goroutines callers on pool for the warm-up and then the
// measured window, and returns what the window saw.
func load(ctx context.Context, pool execer, spec workerSpec) workerResult {
	var (
		wg       sync.WaitGroup
		stop     atomic.Bool
		errs     atomic.Uint64
		errOnce  sync.Once
		firstErr string
	)
	start := time.Now()
	from := start.Add(spec.Warmup)
	until := from.Add(spec.Duration)
	hists := make([]histogram, spec.Goroutines)
	queries := make([]uint64, spec.Goroutines)
	all := make([]uint64, spec.Goroutines)
	// Every 100 queries, SleepShare*100 of them sleep, spread evenly.
	sleepPer100 := int(spec.SleepShare*100 + 0.5)
	sleepQuery := querySleep(spec.Pause)
	for g := range spec.Goroutines {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := g; !stop.Load(); i++ {
				q := querySelect
				if (i*sleepPer100)%100 < sleepPer100 {
					q = sleepQuery
				}
				t0 := time.Now()
				_, err := pool.Exec(ctx, q)
				t1 := time.Now()
				if err != nil {
					if ctx.Err() != nil {
						return
					}
					errs.Add(1)
					errOnce.Do(func() { firstErr = err.Error() })
					// An error that comes at once (a refused
					// connection) must not spin a core.
					time.Sleep(time.Millisecond)
					continue
				}
				all[g]++
				if !t0.Before(from) && !t1.After(until) {
					hists[g].record(t1.Sub(t0))
					queries[g]++
				}
			}
		}()
	}
	timeline := sampleUntil(ctx, pool, start, until)
	stop.Store(true)
	wg.Wait()
	var res workerResult
	res.Timeline = timeline
	for g := range hists {
		res.Latency.merge(&hists[g])
		res.Queries += queries[g]
		res.AllQueries += all[g]
	}
	res.Errors = errs.Load()
	res.FirstError = firstErr
	return res
}

// sampleUntil samples pool every sampleEvery from start until until (or
// ctx's end) and returns the samples: a shoal pool's Stats, its budget's
// Status when it has one, a pgxpool's connection count. It is how a run
// shows whether the shares followed the demand, and how fast.
func sampleUntil(ctx context.Context, pool execer, start, until time.Time) []statSample {
	sample := func() statSample {
		s := statSample{T: time.Since(start)}
		switch p := pool.(type) {
		case statsPool:
			st := p.Stat().Shoal()
			s.Share, s.Demand, s.Conns, s.Waiting, s.Dials = st.Share, st.Demand, st.TotalConns, st.Waiting, st.Dials
		case interface{ Stat() *pgxpool.Stat }:
			st := p.Stat()
			s.Conns, s.Dials = int(st.TotalConns()), st.NewConnsCount()
		}
		if b, ok := pool.(budgetStatuser); ok {
			st := b.budgetStatus()
			s.Fair, s.Held, s.Members = st.Fair, st.Held, st.Members
		}
		return s
	}
	out := make([]statSample, 0, int(until.Sub(start)/sampleEvery)+2)
	out = append(out, sample())
	tick := time.NewTicker(sampleEvery)
	defer tick.Stop()
	end := time.NewTimer(time.Until(until))
	defer end.Stop()
	for {
		select {
		case <-tick.C:
			out = append(out, sample())
		case <-end.C:
			return append(out, sample())
		case <-ctx.Done():
			return out
		}
	}
}
