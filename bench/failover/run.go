package main

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/shoalpool/shoal/internal/pgpair"
)

// A fault is what happens to the primary at -fault-at.
type fault string

const (
	silent  fault = "silent"
	stopped fault = "stopped"
	// rejoin is stopped followed, once the promotion has completed, by the
	// old primary brought back as a standby of the new one while the run
	// goes on: the pair has a standby again, and a read pool can return to
	// it.
	rejoin fault = "rejoin"
)

// spec is one run's shape.
type spec struct {
	workers  int
	duration time.Duration
	faultAt  time.Duration
	deadline time.Duration
	// readers read through the contender's reads alongside the workers,
	// each with deadline and readPause after each read; 0 runs none.
	readers   int
	readPause time.Duration
	// afterRejoin is how long a rejoin run goes on at least after the
	// rejoin returned; the run is extended past duration for it.
	afterRejoin time.Duration
}

// write is one INSERT as its worker saw it.
type write struct {
	seq   int
	start time.Duration // since the run began
	end   time.Duration
	err   error
}

// outcome is one run: every write, and when the fault and promotion were.
type outcome struct {
	fault      fault
	contender  string
	run        string
	writes     [][]write     // by worker
	reads      [][]read      // by reader
	primary    int           // the port of the primary when the run began
	standby    int           // and of its standby, promoted in the run
	faultAt    time.Duration // when the fault began
	downAt     time.Duration // when the primary had gone: silenced, or stopped
	promotedAt time.Duration // when the promotion had completed
	rejoinedAt time.Duration // rejoin: when Rejoin returned (it began at promotedAt)
	length     time.Duration // when the workers and readers were told to stop
	closeTook  time.Duration // the pools' Close after the run
	closeStuck bool          // Close had not returned after closeWait
}

// closeWait bounds the wait for a pool's Close after a run, so that a pool
// stuck on a silent server cannot stall the benchmark; the figure says so.
const closeWait = 15 * time.Second

const insertSQL = "INSERT INTO failover_writes (run, worker, seq) VALUES ($1, $2, $3)"

// runOnce runs one contender through one fault on a healthy pair.
func runOnce(ctx context.Context, pair *pgpair.Pair, c contender, f fault, s spec, run string) (*outcome, error) {
	primaryPort, err := strconv.Atoi(pair.Primary.Port)
	if err != nil {
		return nil, fmt.Errorf("the primary's port %q: %w", pair.Primary.Port, err)
	}
	standbyPort, err := strconv.Atoi(pair.Standby.Port)
	if err != nil {
		return nil, fmt.Errorf("the standby's port %q: %w", pair.Standby.Port, err)
	}
	cs := pair.HA
	var proxy *pgpair.Proxy
	if f == silent {
		if proxy, err = pgpair.NewProxy(pair.Primary.Addr); err != nil {
			return nil, err
		}
		defer proxy.Close()
		if cs, err = pgpair.ReplaceHost(pair.HA, pair.Primary.Addr, proxy.Addr()); err != nil {
			return nil, err
		}
	}
	octx, cancel := context.WithTimeout(ctx, 10*time.Second)
	p, err := c.open(octx, cs)
	cancel()
	if err != nil {
		return nil, fmt.Errorf("open %s: %w", c.name, err)
	}
	o := &outcome{fault: f, contender: c.name, run: run, writes: make([][]write, s.workers), reads: make([][]read, s.readers),
		primary: primaryPort, standby: standbyPort}
	var rp readPool
	if s.readers > 0 {
		octx, cancel := context.WithTimeout(ctx, 10*time.Second)
		rp, err = c.reads(octx, p, cs)
		cancel()
		if err != nil {
			p.Close()
			return nil, fmt.Errorf("open %s's reads: %w", c.name, err)
		}
	}

	begin := time.Now()
	// A rejoin run's end is open until the rejoin has returned, however
	// long that takes (Rejoin is bounded).
	end := newRunEnd(begin, s.duration)
	if f == rejoin {
		end = newRunEnd(begin, 0)
	}
	var wg sync.WaitGroup
	for w := range s.workers {
		wg.Go(func() {
			for seq := 1; end.running(); seq++ {
				start := time.Since(begin)
				wctx, cancel := context.WithTimeout(ctx, s.deadline)
				_, err := p.Exec(wctx, insertSQL, run, w, seq)
				cancel()
				o.writes[w] = append(o.writes[w], write{seq: seq, start: start, end: time.Since(begin), err: err})
			}
		})
	}
	for r := range s.readers {
		wg.Go(func() {
			o.reads[r] = readLoop(ctx, rp, end, s.deadline, s.readPause)
		})
	}

	var faultErr error
	time.Sleep(time.Until(begin.Add(s.faultAt)))
	o.faultAt = time.Since(begin)
	switch f {
	case silent:
		proxy.Silence()
	case stopped, rejoin:
		faultErr = pair.Stop(ctx, pair.Primary, pgpair.Fast)
	}
	o.downAt = time.Since(begin)
	if faultErr == nil {
		faultErr = pair.Promote(ctx, pair.Standby)
	}
	o.promotedAt = time.Since(begin)
	if f == rejoin {
		if faultErr == nil {
			faultErr = pair.Rejoin(ctx, pair.Primary)
		}
		o.rejoinedAt = time.Since(begin)
		end.set(rejoinLength(s.duration, s.afterRejoin, o.rejoinedAt))
	}
	o.length = end.length()
	wg.Wait()

	// The proxy first: a pool closing connections to a silent server would
	// otherwise wait on it.
	if proxy != nil {
		proxy.Close()
	}
	closed := make(chan struct{})
	cstart := time.Now()
	go func() {
		if rp != nil {
			rp.Close()
		}
		p.Close()
		close(closed)
	}()
	select {
	case <-closed:
		o.closeTook = time.Since(cstart)
	case <-time.After(closeWait):
		o.closeStuck = true
	}
	if faultErr != nil {
		return nil, fmt.Errorf("%s fault: %w", f, faultErr)
	}
	return o, nil
}
