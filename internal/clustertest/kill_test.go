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
	waitFor(t, 2*time.Second, "the victim's 3 slot keys in etcd", func() (bool, string) {
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
	waitFor(t, ttl+settleStall, "the victim's record and slot keys gone from etcd", func() (bool, string) {
		v, err := c.read()
		if err != nil {
			return false, err.Error()
		}
		for _, m := range v.Members {
			if m.PID == pid {
				return false, fmt.Sprintf("still a member, slots %v", m.Slots)
			}
		}
		return len(v.Orphans) == 0, fmt.Sprintf("orphaned slots %v", v.Orphans)
	})
	freed := time.Since(killed)
	regrown := fairIn(t, rest, size/(workers-1), "the three within one of N/3")
	exact := settle(t, rest, "the three at N/3", func() (bool, string) { return exactly(rest, 4, 4, 4) })
	t.Logf("measured: TTL %v; the killed worker's share freed in etcd %v after SIGKILL; the three within one of N/3 %v after that, exactly N/3 %v later",
		ttl, freed.Round(time.Millisecond), regrown.Round(time.Millisecond), exact.Round(time.Millisecond))
	// Measured over 12 runs: 2.33s to 3.14s with a 3s TTL, 3.36s to 4.71s
	// with 5s. The lease was renewed up to TTL/3 before the kill, so it
	// expires between 2/3 TTL and TTL after it; etcd revokes it at its
	// next look (every 500ms). The poll here adds up to 20ms and a read.
	if limit := ttl + etcdExpirySweep + 100*time.Millisecond; freed > limit {
		t.Errorf("the killed worker's share was freed %v after SIGKILL, later than its TTL %v and etcd's expiry look", freed.Round(time.Millisecond), ttl)
	}
	unharmed(t, rest...)
}
