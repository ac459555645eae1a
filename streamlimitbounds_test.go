package shoal

import (
	"testing"
	"testing/synctest"
)

// leasesPerConn takes n leases and counts them by connection.
func leasesPerConn(t *testing.T, p *Pool[*fakeConn], n int) ([]Lease[*fakeConn], map[int]int) {
	t.Helper()
	var held []Lease[*fakeConn]
	per := map[int]int{}
	for range n {
		l := mustAcquire(t, p)
		held = append(held, l)
		per[l.Value().id]++
	}
	return held, per
}

// A StreamLimit hook's result above MaxStreams, or below 1, means
// MaxStreams: a connection never carries more leases than MaxStreams, and
// a nonsensical limit does not leave it serving none.
func TestStreamLimitHookOutOfRangeMeansMaxStreams(t *testing.T) {
	for _, limit := range []int{0, -1, 5} {
		synctest.Test(t, func(t *testing.T) {
			p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 2, MaxStreams: 2,
				Hooks: Hooks[*fakeConn]{StreamLimit: func(*fakeConn) int { return limit }}})
			held, per := leasesPerConn(t, p, 3)
			if per[1] != 2 || per[2] != 1 {
				t.Errorf("StreamLimit %d: leases per connection %v, want 2 on the first and 1 on the second (MaxStreams 2)", limit, per)
			}
			for _, l := range held {
				l.Release()
			}
		})
	}
}

// Lease.SetStreamLimit does nothing with n < 1, and raises the limit to
// MaxStreams at most.
func TestSetStreamLimitOutOfRange(t *testing.T) {
	for _, limit := range []int{0, -1, 5} {
		synctest.Test(t, func(t *testing.T) {
			p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 2, MaxStreams: 2})
			first := mustAcquire(t, p)
			first.SetStreamLimit(limit)
			held, per := leasesPerConn(t, p, 2)
			held = append(held, first)
			per[first.Value().id]++
			if per[1] != 2 || per[2] != 1 {
				t.Errorf("SetStreamLimit(%d): leases per connection %v, want 2 on the first and 1 on the second (MaxStreams 2)", limit, per)
			}
			for _, l := range held {
				l.Release()
			}
		})
	}
}
