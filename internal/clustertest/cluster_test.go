//go:build unix

package clustertest

import (
	"context"
	"fmt"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgcount"
	"github.com/shoalpool/shoal/shoaletcd"
	clientv3 "go.etcd.io/etcd/client/v3"
	"go.uber.org/zap"
	"google.golang.org/grpc"
	"google.golang.org/grpc/backoff"
)

// The scenarios' shape: N connections shared by four workers, each of
// which wants all N (so each wants more than N/k for any k), with a
// minimum of one.
const (
	size     = 12
	workers  = 4
	minShare = 1
	busy     = 32 // goroutines of a busy worker: more than size, so demand is capped at MaxConns
)

// cluster is one scenario's workers, the budget they share, and the
// checker counting their connections at the server.
type cluster struct {
	t      *testing.T
	spec   spec
	client *clientv3.Client // the test's own, for reading the budget
	server *pgcount.Checker
	procs  []*proc
}

// newCluster prepares a budget of size connections on etcd (the endpoints
// given) under names of the test's own, and starts the checker: every
// 20ms it counts the connections with the scenario's application_name,
// and the test fails if any sample is above size. tweak adjusts the spec
// every worker starts from.
func newCluster(t *testing.T, etcd []string, tweak func(*spec)) *cluster {
	t.Helper()
	name := uniqueName(t)
	c := &cluster{t: t, spec: spec{
		etcd:     etcd,
		postgres: postgres(t),
		name:     name,
		prefix:   "/shoal-clustertest/" + name + "/",
		size:     size,
		min:      minShare,
		maxConns: size,
		app:      name,
	}}
	if tweak != nil {
		tweak(&c.spec)
	}
	// The logs' directory is made first, and the look at them registered
	// next, so that it runs last, once the checker below has had its say,
	// and before the directory is removed.
	c.spec.logDir = t.TempDir()
	t.Cleanup(func() {
		if t.Failed() {
			for _, p := range c.procs {
				p.logTail(debugLines)
			}
		}
	})
	c.client = etcdClient(t, etcd)
	t.Cleanup(func() {
		// The size key has no lease: delete what the budget left, so the
		// shared etcd does not fill up run after run. Bounded, and only
		// logged: a scenario may have left etcd unable to answer.
		ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
		defer cancel()
		if _, err := c.client.Delete(ctx, c.spec.prefix, clientv3.WithPrefix()); err != nil {
			t.Logf("deleting %s: %v", c.spec.prefix, err)
		}
	})
	// The checker's connect and first sample: generous, since a loaded
	// machine can hold a connect to PostgreSQL up for seconds.
	ctx, cancel := context.WithTimeout(context.Background(), 3*settleStall)
	defer cancel()
	server, err := pgcount.Start(ctx, pgcount.Config{ConnString: c.spec.postgres, Arg: c.spec.app, Limit: c.spec.size})
	if err != nil {
		t.Fatal(err)
	}
	c.server = server
	// Registered before any worker starts, so it runs after every worker
	// has been killed: the count is watched to the very end.
	t.Cleanup(func() {
		r := server.Stop()
		t.Logf("server: %d samples, max %d connections (limit %d), %d failed samples", len(r.Samples), r.Max, c.spec.size, r.Errors)
		if len(r.Over) > 0 {
			var at []string
			for _, s := range r.Over[:min(len(r.Over), 10)] {
				at = append(at, fmt.Sprintf("%d at %s", s.Count, s.At.Format("15:04:05.000")))
			}
			t.Errorf("%d samples above %d connections at the server: %s", len(r.Over), c.spec.size, strings.Join(at, ", "))
		}
		if r.Errors > len(r.Samples)/10 {
			t.Errorf("%d of %d samples failed (last: %v): the count was not watched", r.Errors, r.Errors+len(r.Samples), r.LastErr)
		}
	})
	return c
}

// debugLines is how much of each worker's stderr a failed test shows.
var debugLines = 20

// etcdClient returns a client for the test's own reads, closed at the end.
func etcdClient(t *testing.T, endpoints []string) *clientv3.Client {
	t.Helper()
	c, err := clientv3.New(clientv3.Config{
		Endpoints:   endpoints,
		DialTimeout: 2 * time.Second,
		Logger:      zap.NewNop(),
		DialOptions: []grpc.DialOption{grpc.WithConnectParams(grpc.ConnectParams{
			Backoff: backoff.Config{BaseDelay: 100 * time.Millisecond, Multiplier: 1.6, MaxDelay: time.Second},
		})},
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// add starts one more worker running load goroutines.
func (c *cluster) add(load int) *proc {
	c.t.Helper()
	s := c.spec
	s.load = load
	p := start(c.t, fmt.Sprintf("w%d", len(c.procs)), s)
	c.procs = append(c.procs, p)
	return p
}

// read returns the budget as etcd holds it now. Its bound leaves a loaded
// test process time to hear etcd's answer; a read that takes longer fails
// and is tried again by the wait around it.
func (c *cluster) read() (shoaletcd.View, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	return shoaletcd.Read(ctx, c.client, c.spec.name, c.spec.prefix)
}

// freshness is how old a report may be to count as the worker's state now,
// so that a worker whose reports stopped for no reason the test knows of is
// not read as holding what it last said. It is long: on a loaded machine a
// worker may wait seconds for its turn on the CPU between two reports.
const freshness = 3 * time.Second

// fresh returns p's latest report and whether it says what p holds now: p
// runs (neither stopped by SIGSTOP nor exited), the report was written
// since p was last stopped or resumed, and within freshness.
func fresh(p *proc) (Report, bool) {
	r := p.last()
	p.mu.Lock()
	stopped, signalled := p.stopped, p.signalled
	p.mu.Unlock()
	return r, r.At != 0 && !stopped && !p.exited() && r.At >= signalled.UnixMilli() &&
		time.Since(time.UnixMilli(r.At)) < freshness
}

// waitFor polls cond every 20ms until it holds or d passes, and returns
// how long it took; past d it fails the test with cond's last word.
func waitFor(t *testing.T, d time.Duration, what string, cond func() (bool, string)) time.Duration {
	t.Helper()
	start := time.Now()
	deadline := start.Add(d)
	var last string
	for {
		ok, detail := cond()
		if ok {
			return time.Since(start)
		}
		last = detail
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %s", what, d, last)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// holding says what each worker holds, for messages.
func holding(ps []*proc) string {
	var b strings.Builder
	for i, p := range ps {
		r, ok := fresh(p)
		if i > 0 {
			b.WriteString("; ")
		}
		stale := ""
		if !ok {
			stale = " (stale)"
		}
		fmt.Fprintf(&b, "%s open %d share %d fair %d demand %d members %d online %v%s", p.label, r.Open, r.Share, r.Fair, r.Demand, r.Members, r.Online, stale)
	}
	return b.String()
}

// decide bounds what the budget settles alone, the shares, from etcd round
// trips and the members' arithmetic: a promise. The pools then hold their
// shares, which takes dials to PostgreSQL that a loaded machine (a CI run,
// the tests running in parallel, four processes each) can hold up for
// seconds: that wait follows the workers (settle).
const decide = 2 * time.Second

// fairIn waits until the budget gives every worker in ps a share within
// one of want (within decide), then until each holds within one of want
// (settle), and returns how long both took. what names the state.
func fairIn(t *testing.T, ps []*proc, want float64, what string) time.Duration {
	t.Helper()
	shares := waitFor(t, decide, what+", by share", func() (bool, string) { return sharesWithinOne(ps, want) })
	return shares + settle(t, ps, what, func() (bool, string) { return fairWithinOne(ps, want) })
}

// sharesWithinOne reports whether the budget gives every worker in ps a
// share within one of want, by fresh reports.
func sharesWithinOne(ps []*proc, want float64) (bool, string) {
	return withinOne(ps, want, "share", func(r Report) int { return r.Share })
}

// fairWithinOne reports whether every worker in ps holds within one
// connection of want (the promise: each holds within one of N/k), by
// fresh reports.
func fairWithinOne(ps []*proc, want float64) (bool, string) {
	return withinOne(ps, want, "holding", func(r Report) int { return r.Open })
}

// withinOne reports whether of(report) is within one of want for every
// worker in ps, by fresh reports; what names it in the message.
func withinOne(ps []*proc, want float64, what string, of func(Report) int) (bool, string) {
	for _, p := range ps {
		r, ok := fresh(p)
		if !ok || math.Abs(float64(of(r))-want) > 1 {
			return false, fmt.Sprintf("want each %s within one of %.2f: %s", what, want, holding(ps))
		}
	}
	return true, ""
}

// exactly reports whether each worker in ps holds want[i] connections.
func exactly(ps []*proc, want ...int) (bool, string) {
	for i, p := range ps {
		r, ok := fresh(p)
		if !ok || r.Open != want[i] || r.Share != want[i] {
			return false, fmt.Sprintf("want open = share = %v: %s", want, holding(ps))
		}
	}
	return true, ""
}

// unharmed fails the test if any worker in ps saw a query fail or had a
// connection closed other than by the budget (resized) or by age.
func unharmed(t *testing.T, ps ...*proc) {
	t.Helper()
	for _, p := range ps {
		r := p.last()
		if r.Errors != 0 || r.Dropped != 0 {
			t.Errorf("worker %s: %d queries failed (first: %q), %d connections dropped (closes: %v)", p.label, r.Errors, r.FirstError, r.Dropped, r.Closed)
		}
	}
}

// joined waits until every worker in ps reports it has joined etcd and
// sees all len(ps) members (settle).
func joined(t *testing.T, ps ...*proc) time.Duration {
	t.Helper()
	return settle(t, ps, "every worker joined", func() (bool, string) {
		for _, p := range ps {
			r, ok := fresh(p)
			if !ok || !r.Joined || !r.Online || r.Members != len(ps) {
				return false, holding(ps)
			}
		}
		return true, ""
	})
}
