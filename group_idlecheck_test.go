package shoal

import (
	"fmt"
	"testing"
	"testing/synctest"
)

// A Group's idle check (poolIdle) says what Stats' Leases and Waiting say,
// in both modes: idle before any use, busy with a lease held and with a
// caller waiting, idle again once all have gone.
func TestGroupIdleCheckAgreesWithStats(t *testing.T) {
	for _, tc := range []struct {
		name string
		cfg  Config[*fakeConn]
	}{
		{"exclusive", Config[*fakeConn]{MaxConns: 1}},
		{"multiplexed", Config[*fakeConn]{MaxConns: 1, MaxStreams: 2}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, d := newTestPool(t, tc.cfg)
				check := func(when string, want bool) {
					t.Helper()
					s := p.Stats()
					if byStats := s.Leases == 0 && s.Waiting == 0; byStats != want {
						t.Fatalf("%s: Stats has %d leases and %d waiting, want idle=%v", when, s.Leases, s.Waiting, want)
					}
					if got := poolIdle(p); got != want {
						t.Fatalf("%s: poolIdle = %v, want %v (Stats: %d leases, %d waiting)", when, got, want, s.Leases, s.Waiting)
					}
				}
				check("new", true)
				// A caller waits for the first dial, which waits for
				// block: a waiter and no lease.
				block := make(chan struct{})
				d.mu.Lock()
				d.block = block
				d.mu.Unlock()
				got := make(chan Lease[*fakeConn])
				go func() { got <- mustAcquire(t, p) }()
				synctest.Wait()
				check("a caller waiting for a dial", false)
				close(block)
				held := []Lease[*fakeConn]{<-got}
				check("the waiter's lease held", false)
				for len(held) < max(tc.cfg.MaxStreams, 1) {
					held = append(held, mustAcquire(t, p))
				}
				for i, l := range held {
					l.Release()
					check(fmt.Sprintf("%d of %d leases released", i+1, len(held)), i+1 == len(held))
				}
			})
		})
	}
}
