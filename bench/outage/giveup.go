package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// giveUpSpec is the shape of the callers-that-give-up case.
type giveUpSpec struct {
	callers  int
	maxConns int
	duration time.Duration
	every    int           // every this many queries of a caller, one gives up
	deadline time.Duration // the deadline of the query that gives up
}

// The query that gives up outlasts its deadline: the server is still
// running it when the caller leaves.
const (
	giveUpSQL = "SELECT pg_sleep(0.005)"
	servedSQL = "SELECT 1"
)

// giveUpRun is one pool through the case.
type giveUpRun struct {
	pool       string
	served     int        // queries that succeeded
	abandoned  int        // queries with the short deadline that failed
	completed  int        // queries with the short deadline that succeeded all the same
	otherErrs  int        // SELECT 1s that failed
	sessions   int        // PostgreSQL sessions opened during the run
	otherDials int        // dials that connected and were not sessions: cancel requests
	errs       []errCount // the other errors
	elapsed    time.Duration
	stuck      bool
	closeStuck bool
}

// runGiveUp runs each pool through the case on the shared server, one after
// the other.
func runGiveUp(ctx context.Context, dsn string, s giveUpSpec) ([]giveUpRun, error) {
	return eachPG(func(c pgContender) (giveUpRun, error) { return giveUpOnce(ctx, dsn, c, s) })
}

func giveUpOnce(ctx context.Context, dsn string, c pgContender, s giveUpSpec) (giveUpRun, error) {
	r := giveUpRun{pool: c.name}
	zero := time.Now()
	dials := newDialLog(zero)
	p, err := c.openWarm(ctx, dsn, s.maxConns, dials, "shoal-outage-giveup-"+c.name)
	if err != nil {
		return r, err
	}
	var (
		stop                                 atomic.Bool
		served, abandoned, completed, others atomic.Int64
		mu                                   sync.Mutex
		byMsg                                = make(map[string]int)
		wg                                   sync.WaitGroup
	)
	start := time.Since(zero)
	for range s.callers {
		wg.Go(func() {
			for i := 1; !stop.Load(); i++ {
				var one int
				if i%s.every == 0 {
					qctx, cancel := context.WithTimeout(context.Background(), s.deadline)
					var void any
					err := p.QueryRow(qctx, giveUpSQL).Scan(&void)
					cancel()
					if err != nil {
						abandoned.Add(1)
					} else {
						completed.Add(1)
					}
					continue
				}
				// No deadline, as a caller without one has: a context
				// that can end costs pgx a watch of its own per query.
				if err := p.QueryRow(context.Background(), servedSQL).Scan(&one); err != nil {
					others.Add(1)
					mu.Lock()
					byMsg[oneLine(err)]++
					mu.Unlock()
					continue
				}
				served.Add(1)
			}
		})
	}
	time.Sleep(s.duration)
	stop.Store(true)
	end := time.Since(zero)
	r.stuck = !within(closeWait, wg.Wait)
	r.elapsed = end - start
	r.sessions = dials.sessionsIn(start, end)
	r.otherDials = window(dials.snapshot(), start, end).connected - r.sessions
	r.closeStuck = !closeBounded(p.Close)
	r.served = int(served.Load() + completed.Load())
	r.abandoned, r.completed, r.otherErrs = int(abandoned.Load()), int(completed.Load()), int(others.Load())
	mu.Lock()
	r.errs = topErrors(byMsg)
	mu.Unlock()
	return r, nil
}
