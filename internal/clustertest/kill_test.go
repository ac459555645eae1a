//go:build unix

package clustertest

import (
	"fmt"
	"testing"
	"time"
)

// A worker killed with SIGKILL frees its share within its lease's TTL and
// etcd's look for expired leases, which runs every half second: its
// connections end with it (the kernel closes their sockets), its member
// record and slot keys go when etcd revokes the lease, and the other three
// grow into them: shares within one of N/3 within 2 seconds of that, and
// held once their dials are through. With a
// 3s TTL, and with the default (5s, well within the 10s).
func TestSIGKILLFreesTheShareWithinTheTTL(t *testing.T) {
	t.Parallel()
	killScenario(t, 3*time.Second)
}

func TestSIGKILLFreesTheShareWithinTheDefaultTTL(t *testing.T) {
	t.Parallel()
	killScenario(t, 0)
}

// defaultTTL is shoaletcd's default lease TTL.
const defaultTTL = 5 * time.Second

// etcdExpirySweep is how often etcd's lessor looks for expired leases: a
// lease is revoked up to this long after its TTL ran out.
const etcdExpirySweep = 500 * time.Millisecond

func killScenario(t *testing.T, ttl time.Duration) {
	c := newCluster(t, []string{sharedEtcd(t)}, func(s *spec) { s.ttl = ttl })
	if ttl == 0 {
		ttl = defaultTTL
	}
	for range workers {
		c.add(busy)
	}
	ps := c.procs
	joined(t, ps...)
	settle(t, ps, "each exactly N/4", func() (bool, string) { return exactly(ps, 3, 3, 3, 3) })

	victim, rest := ps[len(ps)-1], ps[:len(ps)-1]
	pid := victim.cmd.Process.Pid
	// Held since each worker holds its share; read by the test, which a
	// loaded machine slows.
	waitFor(t, settleStall, "the victim's 3 slot keys in etcd", func() (bool, string) {
		v, err := c.read()
		if err != nil {
			return false, err.Error()
		}
		for _, m := range v.Members {
			if m.PID == pid {
				return len(m.Slots) == 3, fmt.Sprintf("its slots: %v", m.Slots)
			}
		}
		return false, "no member with its pid"
	})

	killed := time.Now()
	victim.kill()
	// seen is how long after SIGKILL a read that still found the victim's
	// keys began: a lower bound of when they went, where the time the
	// read that no longer found them took to come back (freed, logged) is
	// an upper one, and as loose as the machine is loaded.
	var seen time.Duration
	waitFor(t, ttl+settleStall, "the victim's record and slot keys gone from etcd", func() (bool, string) {
		began := time.Since(killed)
		v, err := c.read()
		if err != nil {
			return false, err.Error()
		}
		for _, m := range v.Members {
			if m.PID == pid {
				seen = began
				return false, fmt.Sprintf("still a member, slots %v", m.Slots)
			}
		}
		if len(v.Orphans) > 0 {
			seen = began
			return false, fmt.Sprintf("orphaned slots %v", v.Orphans)
		}
		return true, ""
	})
	freed := time.Since(killed)
	regrown := fairIn(t, rest, size/(workers-1), "the three within one of N/3")
	exact := settle(t, rest, "the three at N/3", func() (bool, string) { return exactly(rest, 4, 4, 4) })
	t.Logf("measured: TTL %v; the killed worker's share freed in etcd between %v and %v after SIGKILL; the three within one of N/3 %v after that, exactly N/3 %v later",
		ttl, seen.Round(time.Millisecond), freed.Round(time.Millisecond), regrown.Round(time.Millisecond), exact.Round(time.Millisecond))
	// The lease was renewed up to TTL/3 before the kill, so it
	// expires between 2/3 TTL and TTL after it; etcd revokes it at its
	// next look (every 500ms). Judged by when a read that still found
	// the keys began, which a loaded machine can delay but not advance.
	if limit := ttl + etcdExpirySweep + 100*time.Millisecond; seen > limit {
		t.Errorf("the killed worker's share was still held in etcd %v after SIGKILL, later than its TTL %v and etcd's expiry look", seen.Round(time.Millisecond), ttl)
	}
	unharmed(t, rest...)
}
