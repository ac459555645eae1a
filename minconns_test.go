package shoal

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestMinConnsKeptOpenWhileBusy: MinConns counts connections whatever their
// load, so a multiplexed pool keeps two open to spread leases over, where
// MinIdle (connections with no stream) would dial whenever both are busy.
func TestMinConnsKeptOpenWhileBusy(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var why reasons
		const maxIdle = 10 * time.Millisecond
		p, d := newTestPool(t, Config[*fakeConn]{
			MaxConns: 4, MaxStreams: 8, MinConns: 2, MaxIdleTime: maxIdle,
			Hooks: Hooks[*fakeConn]{OnDisconnect: why.hook},
		})
		if err := p.Warm(context.Background()); err != nil {
			t.Fatal(err)
		}
		if s := p.Stats(); s.TotalConns != 2 || d.dials.Load() != 2 {
			t.Fatalf("after Warm: %+v, %d dials; want 2 connections", s, d.dials.Load())
		}
		if s := p.Stats(); s.MinConns != 2 || s.MinIdle != 0 {
			t.Errorf("Stats report MinConns %d, MinIdle %d; want the Config's 2 and 0", s.MinConns, s.MinIdle)
		}
		// A lease on each: both busy, and still only two, with room for more.
		a, b := mustAcquire(t, p), mustAcquire(t, p)
		if a.Value() == b.Value() {
			t.Fatalf("two leases on one connection while another was free")
		}
		p.kickMaintenance()
		time.Sleep(3 * maxIdle) // several maintenance passes and idle times
		synctest.Wait()
		if s := p.Stats(); s.TotalConns != 2 || d.dials.Load() != 2 {
			t.Fatalf("both busy: %+v, %d dials; want the same 2 connections", s, d.dials.Load())
		}
		// Idle past MaxIdleTime, yet not reaped below MinConns.
		a.Release()
		b.Release()
		time.Sleep(3 * maxIdle)
		synctest.Wait()
		if s := p.Stats(); s.TotalConns != 2 || why.count(ReasonIdle) != 0 {
			t.Fatalf("idle: %+v, reasons %v; want 2 open, none reaped", s, why.list)
		}
		// One broken: the pool dials its replacement on its own, at once.
		l := mustAcquire(t, p)
		l.Discard()
		synctest.Wait()
		if s := p.Stats(); s.TotalConns != 2 || d.dials.Load() != 3 {
			t.Fatalf("after a discard: %+v, %d dials; want a replacement dialled (2 open, 3 dials)", s, d.dials.Load())
		}
	})
}

// TestMinConnsExclusive: in exclusive mode MinConns is a floor on open
// connections; idle reaping stops at it even with MinIdle 0.
func TestMinConnsExclusive(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var why reasons
		const maxIdle = 10 * time.Millisecond
		p, _ := newTestPool(t, Config[*fakeConn]{
			MaxConns: 4, MinConns: 2, MaxIdleTime: maxIdle,
			Hooks: Hooks[*fakeConn]{OnDisconnect: why.hook},
		})
		synctest.Wait()
		if s := p.Stats(); s.TotalConns != 2 {
			t.Fatalf("%+v; want MinConns (2) dialled in the background", s)
		}
		var leases []Lease[*fakeConn]
		for range 4 {
			leases = append(leases, mustAcquire(t, p))
		}
		for _, l := range leases {
			l.Release()
		}
		time.Sleep(2 * maxIdle) // past MaxIdleTime and a maintenance tick
		synctest.Wait()
		if n := why.count(ReasonIdle); n != 2 {
			t.Fatalf("%d idle connections reaped after %s idle, want 2 (down to MinConns)", n, 2*maxIdle)
		}
		time.Sleep(3 * maxIdle)
		synctest.Wait()
		if s := p.Stats(); s.TotalConns != 2 || why.count(ReasonIdle) != 2 {
			t.Fatalf("%+v, reasons %v; want 2 open after 2 reaped", s, why.list)
		}
	})
}

// TestFloorFillsWithoutWaitingForMaintenance: a MinIdle floor larger than
// MaxDialing fills dial after dial, each dial's end starting the next,
// instead of MaxDialing per maintenance tick (a second). On the fake clock
// the 16 dials of a millisecond, two at a time, take 8ms; the check comes
// half a tick after New, long before maintenance's next pass.
func TestFloorFillsWithoutWaitingForMaintenance(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 16, MinIdle: 16, MaxDialing: 2,
			Dial: func(context.Context) (*fakeConn, error) {
				time.Sleep(time.Millisecond) // a loopback connect and login
				return &fakeConn{}, nil
			}})
		time.Sleep(maxTick / 2)
		if idle := p.Stats().IdleConns; idle != 16 {
			t.Fatalf("MinIdle 16 with MaxDialing 2: %d idle %s after New, so refill waited for maintenance's tick (%s)", idle, maxTick/2, maxTick)
		}
	})
}

// TestMinConnsReplacesAConnectionWhoseCloseStalls: a connection being closed
// still holds its place in MaxConns until its Close returns, but it serves
// nobody, so it does not count towards MinConns (nor, as MinIdle already
// has it, towards Warm's target): its replacement is dialled at once, not
// once a Close that waits on the network has returned.
func TestMinConnsReplacesAConnectionWhoseCloseStalls(t *testing.T) {
	for _, streams := range []int{1, 8} {
		t.Run("", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				stall := make(chan struct{})
				defer close(stall) // before the pool's Close, at the test's end
				d := &fakeDialer{}
				p, _ := newTestPool(t, Config[*fakeConn]{
					MaxConns: 4, MaxStreams: streams, MinConns: 2, Dial: d.dial,
					Close: func(c *fakeConn) error { <-stall; return d.close(c) },
				})
				if err := p.Warm(context.Background()); err != nil {
					t.Fatal(err)
				}
				l := mustAcquire(t, p)
				l.Discard()
				synctest.Wait()
				if s := p.Stats(); s.TotalConns != 2 || s.Closing != 1 || d.dials.Load() != 3 {
					t.Errorf("streams %d: a Close stalls: %+v, %d dials; want a replacement dialled (2 open, 1 closing, 3 dials)", streams, s, d.dials.Load())
				}
				// Warm counts what serves, too.
				l = mustAcquire(t, p)
				l.Discard()
				if err := p.Warm(context.Background()); err != nil {
					t.Fatal(err)
				}
				if s := p.Stats(); s.TotalConns != 2 {
					t.Errorf("streams %d: after Warm beside 2 stalled closes: %+v; want 2 open", streams, s)
				}
			})
		})
	}
}
