package main

import (
	"context"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal/internal/pgcount"
)

// atServerSpec is the shape of the MaxConns-at-the-server case.
type atServerSpec struct {
	callers  int
	maxConns int
	duration time.Duration
	abandon  time.Duration // each query's deadline, far below its length
	poll     time.Duration // how often the server's count is taken
}

// atServerSQL runs far longer than the callers wait for it.
const atServerSQL = "SELECT pg_sleep(1)"

// atServerRun is one pool through the case.
type atServerRun struct {
	pool       string
	most       int // the most connections of the pool the server showed at once
	over       int // samples above maxConns
	samples    int
	countErrs  int
	abandoned  int // queries that failed (all should: they run 1s, the callers wait 50ms)
	completed  int
	sessions   int // PostgreSQL sessions opened during the run
	otherDials int // dials that connected and were not sessions: cancel requests
	stuck      bool
	closeStuck bool
}

// runAtServer runs each pool through the case on the shared server.
func runAtServer(ctx context.Context, dsn string, s atServerSpec) ([]atServerRun, error) {
	return eachPG(func(c pgContender) (atServerRun, error) { return atServerOnce(ctx, dsn, c, s) })
}

func atServerOnce(ctx context.Context, dsn string, c pgContender, s atServerSpec) (atServerRun, error) {
	r := atServerRun{pool: c.name}
	app := "shoal-outage-atserver-" + c.name
	zero := time.Now()
	dials := newDialLog(zero)
	p, err := c.openWarm(ctx, dsn, s.maxConns, dials, app)
	if err != nil {
		return r, err
	}
	count, err := pgcount.Start(ctx, pgcount.Config{ConnString: dsn, Arg: app, Interval: s.poll, Limit: s.maxConns})
	if err != nil {
		p.Close()
		return r, err
	}
	var (
		stop                 atomic.Bool
		abandoned, completed atomic.Int64
		wg                   sync.WaitGroup
	)
	start := time.Since(zero)
	for range s.callers {
		wg.Go(func() {
			for !stop.Load() {
				qctx, cancel := context.WithTimeout(context.Background(), s.abandon)
				var void any
				err := p.QueryRow(qctx, atServerSQL).Scan(&void)
				cancel()
				if err != nil {
					abandoned.Add(1)
				} else {
					completed.Add(1)
				}
			}
		})
	}
	time.Sleep(s.duration)
	stop.Store(true)
	end := time.Since(zero)
	r.stuck = !within(closeWait, wg.Wait)
	rep := count.Stop()
	r.sessions = dials.sessionsIn(start, end)
	r.otherDials = window(dials.snapshot(), start, end).connected - r.sessions
	r.closeStuck = !closeBounded(p.Close)
	r.most, r.over, r.samples, r.countErrs = rep.Max, len(rep.Over), len(rep.Samples), rep.Errors
	r.abandoned, r.completed = int(abandoned.Load()), int(completed.Load())
	return r, nil
}
