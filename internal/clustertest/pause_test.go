//go:build unix

package clustertest

import (
	"fmt"
	"syscall"
	"testing"
	"time"
)

// A worker stopped with SIGSTOP for three lease lengths, then resumed.
// Its lease expires while it is stopped, so etcd gives its slots back
// while its connections are still open at the server: the slot counted
// twice that every lease scheme has (see shoaletcd's doc). The others,
// whose shares grow to N/3, try those slots, and shoalpgx's fence refuses
// them because the stopped worker's backends still hold their advisory
// locks: the server never sees more than N. Resumed, the worker rejoins,
// re-takes its slots, and every worker is back at N/4 with no query
// failed and no connection dropped.
func TestWorkerStoppedForThreeLeases(t *testing.T) {
	t.Parallel()
	const ttl = 3 * time.Second
	c := newCluster(t, []string{sharedEtcd(t)}, func(s *spec) { s.ttl = ttl })
	for range workers {
		c.add(busy)
	}
	ps := c.procs
	joined(t, ps...)
	settle(t, ps, "each exactly N/4", func() (bool, string) { return exactly(ps, 3, 3, 3, 3) })

	paused, rest := ps[0], ps[1:]
	pid := paused.cmd.Process.Pid
	member := func() (bool, string) {
		v, err := c.read()
		if err != nil {
			return false, err.Error()
		}
		for _, m := range v.Members {
			if m.PID == pid {
				return true, fmt.Sprintf("a member, slots %v", m.Slots)
			}
		}
		return false, fmt.Sprintf("not a member; %d slots free", v.Free)
	}
	stopped := time.Now()
	paused.signal(syscall.SIGSTOP)
	expired := waitFor(t, ttl+3*time.Second, "the stopped worker's lease expired", func() (bool, string) {
		in, detail := member()
		return !in, detail
	})
	time.Sleep(time.Until(stopped.Add(3 * ttl)))
	var restMax [workers - 1]int
	var fenced, fencedConnected int64
	for i, p := range rest {
		for _, r := range p.since(stopped) {
			restMax[i] = max(restMax[i], r.Open)
		}
		r := p.last()
		fenced += r.Fenced
		// Every connect ends as a connection or a refusal by the lock;
		// dials in flight (waiting for a permit) have not connected yet.
		fencedConnected += r.Connects - (r.Dials - r.DialErrors - int64(r.Dialing))
	}
	paused.signal(syscall.SIGCONT)
	doubled := time.Since(stopped) - expired

	rejoined := settle(t, ps, "the resumed worker a member again", member)
	fair := fairIn(t, ps, size/workers, "all four within one of N/4")
	exact := settle(t, ps, "all four at N/4", func() (bool, string) { return exactly(ps, 3, 3, 3, 3) })
	t.Logf("measured: stopped %v; its lease expired %v in, so etcd counted its 3 slots free for %v while its connections stayed open at the server; "+
		"the others' most open during the stop %v, their dials refused by the fence %d (%d of them after connecting), the server's most so far %d; "+
		"resumed, a member again %v later, all within one of N/4 %v after that, exactly N/4 %v later",
		3*ttl, expired.Round(time.Millisecond), doubled.Round(time.Millisecond), restMax, fenced, fencedConnected, c.server.Max(),
		rejoined.Round(time.Millisecond), fair.Round(time.Millisecond), exact.Round(time.Millisecond))
	for i, m := range restMax {
		if m > size/(workers-1) {
			t.Errorf("worker %s held %d during the stop, above its share N/3", rest[i].label, m)
		}
	}
	unharmed(t, ps...)
}
