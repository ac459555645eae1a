package shoal

import (
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// BusyStreams: once every open connection carries BusyStreams leases, the
// next lease goes to the least-loaded one at once and the pool dials
// another in the background, until MaxConns; a lone caller keeps to one
// connection.
func TestBusyStreamsSpreadsLoadBeforeConnectionsFill(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// One connection open before the first acquire, so that no caller
		// waits for a dial: a waiter served by the dial it started may
		// take a second stream in its own last look and dial ahead once.
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 3, MaxStreams: 4, BusyStreams: 1, MinConns: 1})
		if err := p.Warm(t.Context()); err != nil {
			t.Fatal(err)
		}
		a := mustAcquire(t, p)
		a.Release()
		a = mustAcquire(t, p)
		synctest.Wait()
		if n := d.dials.Load(); n != 1 {
			t.Fatalf("%d dials for one caller at a time, want 1", n)
		}
		b := mustAcquire(t, p) // the only connection is busy: b shares it, and a second is dialled
		if b.Value() != a.Value() {
			t.Fatalf("the second lease waited for a new connection instead of sharing the open one")
		}
		synctest.Wait()
		if n := d.dials.Load(); n != 2 {
			t.Fatalf("%d dials once the only connection was busy, want 2", n)
		}
		c := mustAcquire(t, p) // to the new, idle connection: no dial
		if c.Value() == a.Value() {
			t.Fatalf("the third lease went to the busier connection")
		}
		synctest.Wait()
		if n := d.dials.Load(); n != 2 {
			t.Fatalf("%d dials with a connection that was idle, want 2", n)
		}
		e := mustAcquire(t, p) // both busy: a third is dialled
		synctest.Wait()
		f := mustAcquire(t, p)
		g := mustAcquire(t, p) // three busy, at MaxConns: no more
		synctest.Wait()
		if n := d.dials.Load(); n != 3 {
			t.Fatalf("%d dials at MaxConns 3, want 3", n)
		}
		if s := p.Stats(); s.TotalConns != 3 || s.Leases != 6 {
			t.Fatalf("stats %+v, want 3 connections and 6 leases", s)
		}
		for _, l := range []Lease[*fakeConn]{a, b, c, e, f, g} {
			l.Release()
		}
	})
}

// Without BusyStreams a connection takes MaxStreams leases before a second
// is dialled; BusyStreams is checked against the mode and MaxStreams.
func TestBusyStreamsDefaultAndValidation(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 3, MaxStreams: 4, BusyStreams: -1})
		var ls []Lease[*fakeConn]
		for range 4 {
			ls = append(ls, mustAcquire(t, p))
		}
		synctest.Wait()
		if n := d.dials.Load(); n != 1 {
			t.Fatalf("%d dials for 4 leases of MaxStreams 4 with BusyStreams off, want 1", n)
		}
		for _, l := range ls {
			l.Release()
		}
	})
	for _, c := range []struct {
		cfg  Config[*fakeConn]
		want string
	}{
		{Config[*fakeConn]{MaxStreams: 4, BusyStreams: 5}, "BusyStreams must be <= MaxStreams (4), got 5"},
		{Config[*fakeConn]{BusyStreams: 2}, "BusyStreams applies to multiplexed connections only"},
	} {
		c.cfg.Dial = (&fakeDialer{}).dial
		if _, err := New(c.cfg); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("New(%+v): %v, want an error with %q", c.cfg, err, c.want)
		}
	}
}

// A multiplexed pool whose busy connections want another beside them while
// a budget's share holds it back asks for a division, and dials as soon as
// the division gives it the place: here a peer pool keeps two idle
// connections of a budget of 3, and once the multiplexed pool's one
// connection is busy, a peer's idle connection closes and the multiplexed
// pool's second opens, without waiting for another lease to find the first
// busy.
func TestBusyStreamsDialsWhenTheBudgetGivesThePlace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustBudget(t, 3, BudgetIdleTime(time.Second))
		peer, _ := newTestPool(t, Config[*fakeConn]{Name: "peer", MaxConns: 3, Budget: b})
		p, d := newTestPool(t, Config[*fakeConn]{Name: "mux", MaxConns: 3, MaxStreams: 4, BusyStreams: 1, Budget: b})
		x, y := mustAcquire(t, peer), mustAcquire(t, peer)
		x.Release()
		y.Release()
		a := mustAcquire(t, p)
		// Past IdleTime the peer wants none, and keeps its two idle
		// connections while nobody asks for them.
		time.Sleep(2 * time.Second)
		synctest.Wait()
		if s, ps := p.Stats(), peer.Stats(); s.TotalConns != 1 || ps.TotalConns != 2 {
			t.Fatalf("before the second lease: mux %d open, peer %d, want 1 and 2", s.TotalConns, ps.TotalConns)
		}
		c := mustAcquire(t, p) // shares the busy connection, and wants another beside it
		time.Sleep(localKickGap)
		synctest.Wait()
		if s, ps := p.Stats(), peer.Stats(); s.TotalConns != 2 || ps.TotalConns != 1 || d.dials.Load() != 2 {
			t.Fatalf("after the second lease: mux %d open (%d dials), peer %d; want 2 (2 dials) and 1", s.TotalConns, d.dials.Load(), ps.TotalConns)
		}
		a.Release()
		c.Release()
	})
}

// BusyStreams dials one connection at a time: with the dial held, more
// busy leases start no second dial.
func TestBusyStreamsDialsOneAtATime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 4, MaxStreams: 4, BusyStreams: 1})
		l1 := mustAcquire(t, p)
		block := d.blockDials()
		l2 := mustAcquire(t, p)
		l3 := mustAcquire(t, p)
		synctest.Wait()
		if n := p.Stats().Dialing; n != 1 {
			t.Errorf("dialing = %d, want 1", n)
		}
		close(block)
		synctest.Wait()
		l1.Release()
		l2.Release()
		l3.Release()
	})
}
