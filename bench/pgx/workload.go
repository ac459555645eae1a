package main

import (
	"context"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"github.com/shoalpool/shoal/bench/internal/cpustat"
)

// A query is one of the measured statements.
type query struct {
	name string
	sql  string
	rows bool // read with Query and a rows loop instead of QueryRow
	exec bool // run with Exec, given the worker's index and iteration
	ids  int  // for rows: how many of the table's accounts it picks from (accountIDs when 0)
}

var defaultQueries = []query{
	{name: "SELECT 1", sql: "select 1"},
	{name: "small row", sql: smallRowSQL, rows: true},
}

// smallRowSQL reads one account by its primary key.
const smallRowSQL = "select id, name, email, balance, created_at from shoal_bench_accounts where id = $1"

// setupSQL creates the table the small-row query reads, with 100,000 rows
// (the default set picks from the first accountIDs), and the table the
// pipeline set's inserts write.
const setupSQL = `
create table if not exists shoal_bench_accounts (
	id         int primary key,
	name       text not null,
	email      text not null,
	balance    numeric(12,2) not null,
	created_at timestamptz not null
);
insert into shoal_bench_accounts
select i, 'user ' || i, 'user' || i || '@example.com', i * 1.5, now()
from generate_series(1, 100000) i
on conflict (id) do nothing;
create table if not exists shoal_bench_events (
	worker int not null,
	n      int not null,
	at     timestamptz not null default now()
);
truncate shoal_bench_events`

// accountIDs are how many rows the default set's small-row query picks from.
const accountIDs = 1000

// A worker runs one query and reports its error. worker is the caller's
// index, i the caller's iteration, for picking an id.
type worker func(ctx context.Context, worker, i int) error

// measured is one run's outcome.
type measured struct {
	qps      float64       // queries per second
	cpuQuery time.Duration // this process's CPU time (user+system) per query
	// userQuery is the user part of cpuQuery: the client's own work, where
	// the rest is the kernel's, mostly system calls, whose cost differs
	// most from one machine to another.
	userQuery time.Duration
	csQuery   float64 // this process's voluntary context switches (threads going to sleep) per query
	// reads and writes are this process's read and write system calls per
	// query (/proc/self/io; 0 where there is none): on loopback each costs
	// about as much as the server's work on a small statement, so they
	// say how well a pool batches.
	reads, writes float64
	// p50 and p99 of the queries' latencies as the workers saw them, a
	// wait for a connection included: what barging trades for throughput.
	p50, p99 time.Duration
	// idle is the share of the whole machine's CPU time that went unused
	// during the run (-1 when it could not be read). The client and the
	// server share the machine: a pool whose connections wait between
	// queries leaves it idle rather than busy.
	idle float64
	// wall is the run's real length, from the workers' start to the last
	// one's end: past the nominal length by as long as the slowest call
	// still in flight at the end took to return.
	wall time.Duration
	// slowest is the q/s of the run's slowest window (paceWindow) before
	// the nominal end, -1 when the run was too short to hold one. Beside
	// wall it tells a round whose work stopped (a window near zero) from
	// one whose call stuck (wall far past the nominal length).
	slowest float64
}

// usage returns the CPU time this process has used, user and system, and
// its voluntary context switches: a thread sleeping because it has nothing
// to run, to be woken (a futex or epoll wake-up, a syscall each side) when
// there is. Unlike throughput, the count per query hardly depends on the
// machine's other load.
func usage() (user, system time.Duration, sleeps int64) {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0, 0, 0
	}
	return time.Duration(ru.Utime.Nano()), time.Duration(ru.Stime.Nano()), ru.Nvcsw
}

// ioCounts are this process's read and write system calls so far.
type ioCounts struct{ reads, writes int64 }

// syscallCounts reads syscr and syscw from /proc/self/io, or returns zeros
// where it cannot.
func syscallCounts() ioCounts {
	b, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return ioCounts{}
	}
	var c ioCounts
	for _, line := range strings.Split(string(b), "\n") {
		k, v, ok := strings.Cut(line, ": ")
		if !ok {
			continue
		}
		n, _ := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		switch k {
		case "syscr":
			c.reads = n
		case "syscw":
			c.writes = n
		}
	}
	return c
}

// runFor runs n goroutines of w for d and returns the queries per second
// they completed, the client's CPU time per query and the calls' latency
// percentiles. Each call of w completes perCall queries (the pipeline
// ceiling's calls send several at once), so the latencies are those of its
// calls: a call's statements all wait for its last answer. It also returns
// the run's real length and its slowest window's q/s (see measured). The
// first error stops the run.
func runFor(ctx context.Context, n int, d time.Duration, w worker, perCall int) (measured, error) {
	var (
		stop     atomic.Bool
		wg       sync.WaitGroup
		errOnce  sync.Once
		firstErr error
	)
	latencies := make([][]time.Duration, n) // per worker, merged after the clock stops
	done := make(callCounts, n)
	start := time.Now()
	userStart, sysStart, csStart := usage()
	ioStart := syscallCounts()
	machine := cpustat.Start()
	for g := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			lat := make([]time.Duration, 0, 1<<14)
			for i := 0; !stop.Load(); i++ {
				t0 := time.Now()
				if err := w(ctx, g, i); err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("worker %d: %w", g, err) })
					stop.Store(true)
					break
				}
				lat = append(lat, time.Since(t0))
				done[g].n.Add(1)
			}
			latencies[g] = lat
		}()
	}
	// This goroutine has nothing else to do until the end, so it samples
	// the workers' counts every window meanwhile, and once more at the
	// end for the last part of a window; each sample's time is read after
	// its counts rather than taken from the tick, which a busy machine
	// can deliver late.
	p := startPace(start)
	tick := time.NewTicker(paceWindow)
	end := time.NewTimer(d)
	for waiting := true; waiting; {
		select {
		case <-tick.C:
			total := done.total()
			p.sample(time.Now(), total)
		case <-end.C:
			waiting = false
		}
	}
	tick.Stop()
	total := done.total()
	p.sample(time.Now(), total)
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(start)
	userEnd, sysEnd, csEnd := usage()
	ioEnd := syscallCounts()
	idle := machine.IdleShare()
	all := slices.Concat(latencies...)
	q := len(all) * perCall
	m := measured{qps: float64(q) / elapsed.Seconds(), idle: idle, wall: elapsed, slowest: -1}
	if rate, ok := p.slowestRate(); ok {
		m.slowest = rate * float64(perCall)
	}
	if calls := len(all); calls > 0 {
		m.userQuery = (userEnd - userStart) / time.Duration(q)
		m.cpuQuery = m.userQuery + (sysEnd-sysStart)/time.Duration(q)
		m.csQuery = float64(csEnd-csStart) / float64(q)
		m.reads = float64(ioEnd.reads-ioStart.reads) / float64(q)
		m.writes = float64(ioEnd.writes-ioStart.writes) / float64(q)
		slices.Sort(all)
		m.p50, m.p99 = all[calls/2], all[calls*99/100]
	}
	return m, firstErr
}

// pickQueries returns the queries of set named in names, in set's order,
// or an error naming one that set does not have.
func pickQueries(set []query, names []string) ([]query, error) {
	var out []query
	for _, n := range names {
		n = strings.TrimSpace(n)
		found := false
		for _, q := range set {
			if strings.EqualFold(q.name, n) {
				found = true
			}
		}
		if !found {
			have := make([]string, len(set))
			for i, q := range set {
				have[i] = q.name
			}
			return nil, fmt.Errorf("-queries: no query %q here (this set has %s)", n, strings.Join(have, ", "))
		}
	}
	for _, q := range set {
		for _, n := range names {
			if strings.EqualFold(q.name, strings.TrimSpace(n)) {
				out = append(out, q)
				break
			}
		}
	}
	return out, nil
}
