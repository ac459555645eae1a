package shoal

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// TestPanickingHooksKeepCountsRight guards the README's "a panic in Dial,
// Close, a hook, Fill or Avoid never corrupts the pool's counts" for the
// user code TestPanicsKeepCountsRight and TestFillOrAvoidThatPanicsIsANo
// leave out: OnConnect, OnDisconnect, HealthCheck, StreamLimit and Broken.
// Each panic is a failure (OnConnect, HealthCheck), a "broken" (Broken) or
// nothing (OnDisconnect, StreamLimit), and the counts match the
// connections open.
func TestPanickingHooksKeepCountsRight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d := newTestPool(t, Config[*fakeConn]{
			MaxConns: 2,
			Hooks: Hooks[*fakeConn]{
				OnConnect: func(_ context.Context, c *fakeConn) error {
					if c.id == 1 {
						panic("OnConnect exploded")
					}
					return nil
				},
				OnDisconnect: func(*fakeConn, Reason) { panic("OnDisconnect exploded") },
			},
			HealthCheck: func(_ context.Context, c *fakeConn) error {
				if c.id == 2 {
					panic("HealthCheck exploded")
				}
				return nil
			},
			Broken: func(error) bool { panic("Broken exploded") },
		})
		_, err := p.Acquire(context.Background())
		var pe *panicError
		if !errors.Is(err, ErrDial) || !errors.As(err, &pe) {
			t.Fatalf("acquire with OnConnect panicking: %v, want the panic as a failed dial", err)
		}
		l := acquireAfterBackoff(t, p, pe)
		if l.Value().id != 2 {
			t.Fatalf("got connection %d, want 2", l.Value().id)
		}
		l.Release()
		time.Sleep(2 * time.Second) // past HealthCheckAfter: the next acquire checks it
		l = mustAcquire(t, p)
		if l.Value().id != 3 {
			t.Fatalf("got connection %d after its HealthCheck panicked, want a new one (3)", l.Value().id)
		}
		l.Release()
		err = p.Do(context.Background(), func(*fakeConn) error { return errBoom })
		if !errors.Is(err, errBoom) {
			t.Fatalf("Do: %v, want fn's error", err)
		}
		synctest.Wait()
		if s, open := p.Stats(), d.openConns(); s.TotalConns != open || open != 0 || s.Closed != 3 || s.InUseConns != 0 || s.Closing != 0 {
			t.Fatalf("stats %+v with %d connections open; want none open and 3 closed (OnConnect's, HealthCheck's, Broken's)", s, open)
		}
		mustAcquire(t, p).Release()
		if s := p.Stats(); s.TotalConns != 1 || s.IdleConns != 1 {
			t.Fatalf("after the panics: %+v, want the one connection idle", s)
		}

		// Multiplexed: a StreamLimit that panics leaves MaxStreams.
		m, _ := newTestPool(t, Config[*fakeConn]{
			MaxConns: 2, MaxStreams: 3,
			Hooks: Hooks[*fakeConn]{StreamLimit: func(*fakeConn) int { panic("StreamLimit exploded") }},
		})
		var leases []Lease[*fakeConn]
		for range 3 {
			leases = append(leases, mustAcquire(t, m))
		}
		if s := m.Stats(); s.TotalConns != 1 || s.Leases != 3 {
			t.Fatalf("3 leases with StreamLimit panicking: %+v, want them on one connection of MaxStreams 3", s)
		}
		for _, l := range leases {
			l.Release()
		}
		if s := m.Stats(); s.Leases != 0 {
			t.Fatalf("after the releases: %+v", s)
		}
	})
}
