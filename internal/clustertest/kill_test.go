//go:build unix

package clustertest

import (
	"fmt"
	"testing"
	"time"
)

// A worker killed with SIGKILL frees its share within its lease's TTL: its
// connections end with it (the kernel closes their sockets), its member
// record and slot keys go when etcd expires the lease, and the other three
// grow into them, each within one of N/3 within 2 seconds of that. With a
// 3s TTL, and with the default (5s).
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

func killScenario(t *testing.T, ttl time.Duration) {
	c := newCluster(t, []string{sharedEtcd(t)}, func(s *spec) { s.ttl = ttl })
	if ttl == 0 {
		ttl = defaultTTL
	}
	for range workers {
		c.add(busy)
	}
	ps := c.procs
	joined(t, 15*time.Second, ps...)
	waitFor(t, 4*time.Second, "each exactly N/4", func() (bool, string) { return exactly(ps, 3, 3, 3, 3) })

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
	waitFor(t, ttl+3*time.Second, "the victim's record and slot keys gone from etcd", func() (bool, string) {
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
	regrown := waitFor(t, 2*time.Second, "the three within one of N/3", func() (bool, string) {
		return fairWithinOne(rest, size/(workers-1))
	})
	exact := waitFor(t, 2*time.Second, "the three at N/3", func() (bool, string) { return exactly(rest, 4, 4, 4) })
	t.Logf("measured: TTL %v; the killed worker's share freed in etcd %v after SIGKILL; the three within one of N/3 %v after that, exactly N/3 %v later",
		ttl, freed.Round(time.Millisecond), regrown.Round(time.Millisecond), exact.Round(time.Millisecond))
	if freed > ttl {
		t.Errorf("the killed worker's share was freed %v after SIGKILL, later than its TTL %v", freed.Round(time.Millisecond), ttl)
	}
	unharmed(t, rest...)
}
