package main

import (
	"context"
	"fmt"
	"time"

	"github.com/shoalpool/shoal/internal/pgcount"
)

// downSpec is the shape of an outage run, PostgreSQL's or HTTP's.
type downSpec struct {
	workerSpec
	maxConns int
	warm     time.Duration // the throughput before the outage is measured from here
	before   time.Duration // the server stops this long after the run began
	down     time.Duration // and stays down this long once gone
	after    time.Duration // the run goes on this long after the server's return
	rounds   int           // outages per pool, the pools' order reversed in every other round
}

// inRounds runs each of n contenders through s.rounds outages, by once(i,
// round): in order in odd rounds, reversed in even ones, so that neither
// always runs first on a server just started or a machine just quiet.
func inRounds(n int, s downSpec, once func(i, round int) (downRun, error)) ([]downRun, error) {
	var runs []downRun
	for round := 1; round <= s.rounds; round++ {
		for k := range n {
			i := k
			if round%2 == 0 {
				i = n - 1 - k
			}
			r, err := once(i, round)
			if err != nil {
				return nil, fmt.Errorf("%s, round %d: %w", r.pool, round, err)
			}
			r.round = round
			runs = append(runs, r)
		}
	}
	return runs, nil
}

// countPoll is how often the server-down case counts the pool's
// connections at the server.
const countPoll = 10 * time.Millisecond

// downRun is one pool through one outage.
type downRun struct {
	pool  string
	round int
	t     outageTimes
	f     outageFigures
	conns time.Duration // from the return to maxConns connections at the server; never if not
	// countErrs are the connection counts that failed (while the server
	// was down, every one does).
	countErrs    int
	workersStuck bool // some worker had not returned closeWait after the end
	closeStuck   bool
}

// pgDownSQL is the workers' query.
const pgDownSQL = "SELECT 1"

// runPGDown runs each pool through s.rounds outages of the throwaway
// server, one pool after the other.
func runPGDown(ctx context.Context, srv *tempServer, s downSpec) ([]downRun, error) {
	return inRounds(len(pgContenders), s, func(i, _ int) (downRun, error) {
		return pgDownOnce(ctx, srv, pgContenders[i], s)
	})
}

func pgDownOnce(ctx context.Context, srv *tempServer, c pgContender, s downSpec) (downRun, error) {
	r := downRun{pool: c.name}
	app := "shoal-outage-down-" + c.name
	zero := time.Now()
	dials := newDialLog(zero)
	p, err := c.openWarm(ctx, srv.cs, s.maxConns, dials, app)
	if err != nil {
		return r, err
	}
	count, err := pgcount.Start(ctx, pgcount.Config{ConnString: srv.cs, Arg: app, Interval: countPoll})
	if err != nil {
		p.Close()
		return r, err
	}
	w := startWorkers(zero, s.workerSpec, func(ctx context.Context) error {
		var one int
		return p.QueryRow(ctx, pgDownSQL).Scan(&one)
	})
	at := func() time.Duration { return time.Since(zero) }
	r.t.warm = s.warm
	time.Sleep(time.Until(zero.Add(s.before)))
	r.t.stop = at()
	stopErr := srv.stop()
	r.t.down = at()
	time.Sleep(time.Until(zero.Add(r.t.down + s.down)))
	r.t.back = at()
	returned, startErr := srv.start(ctx)
	r.t.returned = returned.Sub(zero)
	if startErr == nil {
		time.Sleep(time.Until(returned.Add(s.after)))
	}
	r.t.end = at()
	r.workersStuck = !w.end(s.deadline + closeWait)
	rep := count.Stop()
	r.closeStuck = !closeBounded(p.Close)
	if stopErr != nil || startErr != nil {
		return r, fmt.Errorf("the outage: stop: %v; start: %v", stopErr, startErr)
	}
	r.f = measureOutage(w.all(), r.t, dials.snapshot())
	samples := make([]countSample, len(rep.Samples))
	for i, sm := range rep.Samples {
		samples[i] = countSample{at: sm.At.Sub(zero), count: sm.Count}
	}
	r.conns = reachedAfter(samples, r.t.returned, s.maxConns)
	r.countErrs = rep.Errors
	return r, nil
}
