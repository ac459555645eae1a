//go:build unix

package clustertest

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/etcdtest"
)

// etcd stopped for 5 seconds (SIGSTOP: it keeps its sockets and answers
// nothing), with a 3s TTL, so every lease runs out meanwhile. The pools
// keep serving on what they hold: no worker opens more or fewer
// connections than it held when etcd stopped, queries go on, none fails.
// When etcd returns, they rejoin (re-taking their slots under new leases
// where the old ones expired) without dropping a connection, and are at
// N/4 each again.
func TestEtcdStoppedForFiveSeconds(t *testing.T) {
	t.Parallel()
	e := etcdtest.StartSingle(t)
	const ttl = 3 * time.Second
	c := newCluster(t, e.Endpoints(), func(s *spec) { s.ttl = ttl })
	for range workers {
		c.add(busy)
	}
	ps := c.procs
	joined(t, ps...)
	settle(t, ps, "each exactly N/4", func() (bool, string) { return exactly(ps, 3, 3, 3, 3) })

	var before [workers]Report
	for i, p := range ps {
		before[i] = p.last()
	}
	stopped := time.Now()
	e.Member(0).Stop()
	time.Sleep(5 * time.Second)
	e.Member(0).Cont()
	resumed := time.Now()

	offline := make([]time.Duration, len(ps)) // when each first said etcd was away
	for i, p := range ps {
		var during []Report
		for _, r := range p.since(stopped) {
			if r.At < resumed.UnixMilli() {
				during = append(during, r)
			}
		}
		if len(during) < 20 {
			t.Fatalf("worker %s wrote %d reports during the 5s stop", p.label, len(during))
		}
		for _, r := range during {
			if r.Open != before[i].Open {
				t.Errorf("worker %s held %d at %s while etcd was stopped, %d before", p.label, r.Open,
					time.UnixMilli(r.At).Format("15:04:05.000"), before[i].Open)
			}
			if !r.Online && offline[i] == 0 {
				offline[i] = time.UnixMilli(r.At).Sub(stopped)
			}
		}
		if served := during[len(during)-1].Queries - during[0].Queries; served < 100 {
			t.Errorf("worker %s served %d queries during the stop", p.label, served)
		}
	}
	back := settle(t, ps, "all four online again, each seeing four members", func() (bool, string) {
		for _, p := range ps {
			r, ok := fresh(p)
			if !ok || !r.Online || r.Members != len(ps) {
				return false, holding(ps)
			}
		}
		return true, ""
	})
	// A member that rejoined to find a slot of its connection taken (every
	// lease ended, and the members cover their slots again one after the
	// other) is over budget until that connection is released and closed
	// and it finds a slot again: seconds, on a loaded machine.
	exact := settle(t, ps, "each exactly N/4 again", func() (bool, string) { return exactly(ps, 3, 3, 3, 3) })
	lost := 0
	for _, p := range ps {
		if p.logged("lease lost") {
			lost++
		}
	}
	t.Logf("measured: etcd stopped 5s, TTL %v; the workers saw it away after %v; %d of %d lost their lease; all online again %v after SIGCONT, exactly N/4 %v later",
		ttl, roundAll(offline), lost, len(ps), back.Round(time.Millisecond), exact.Round(time.Millisecond))
	unharmed(t, ps...)
}

// One member of a three-member etcd cluster killed, the leader, the most
// disruptive: the other two keep quorum, the workers' clients fail over,
// and nothing a caller can see changes: every worker holds N/4 throughout,
// no query fails, no connection is dropped. The budget still works on two
// members: a worker that goes idle gives its share to the others.
func TestOneOfThreeEtcdMembersKilled(t *testing.T) {
	t.Parallel()
	e := etcdtest.StartCluster(t, 3)
	c := newCluster(t, e.Endpoints(), nil)
	for range workers {
		c.add(busy)
	}
	ps := c.procs
	joined(t, ps...)
	settle(t, ps, "each exactly N/4", func() (bool, string) { return exactly(ps, 3, 3, 3, 3) })

	leader := e.Leader()
	killed := time.Now()
	e.Member(leader).Kill()
	time.Sleep(5 * time.Second)
	flips := 0
	for _, p := range ps {
		for _, r := range p.since(killed) {
			if r.Open != 3 || r.Share != 3 {
				t.Errorf("worker %s held %d (share %d) at %s, after the etcd leader was killed", p.label, r.Open, r.Share,
					time.UnixMilli(r.At).Format("15:04:05.000"))
			}
			if !r.Online {
				flips++
			}
		}
	}

	ps[0].setLoad(0)
	// The shares within the idle time and a little more; the connections
	// once the pools have closed and dialled them.
	moved := waitFor(t, idleTime+2*time.Second, "the idle worker's share moved to the others, by share", func() (bool, string) {
		return split(ps, func(r Report) int { return r.Share })
	})
	moved += settle(t, ps, "the idle worker's share moved to the others", func() (bool, string) {
		return split(ps, func(r Report) int { return r.Open })
	})
	t.Logf("measured: leader m%d killed; %d reports of etcd away in the 5s after (none means no worker noticed); with two members left, an idle worker's share moved %v after it went idle",
		leader, flips, moved.Round(time.Millisecond))
	unharmed(t, ps...)
}

// split reports whether of(report) is minShare for ps[0], the idle worker,
// and 3, 4 and 4 in some order for the others, by fresh reports.
func split(ps []*proc, of func(Report) int) (bool, string) {
	r, ok := fresh(ps[0])
	if !ok || of(r) != minShare {
		return false, holding(ps)
	}
	var got []int
	for _, p := range ps[1:] {
		r, ok := fresh(p)
		if !ok {
			return false, holding(ps)
		}
		got = append(got, of(r))
	}
	slices.Sort(got)
	return slices.Equal(got, []int{3, 4, 4}), holding(ps)
}

// roundAll rounds each duration to the millisecond, for logs.
func roundAll(ds []time.Duration) string {
	out := make([]string, len(ds))
	for i, d := range ds {
		out[i] = d.Round(time.Millisecond).String()
		if d == 0 {
			out[i] = "never"
		}
	}
	return fmt.Sprint(out)
}
