package shoal

import (
	"context"
	"testing"
	"time"
)

// TestMinConnsKeptOpenWhileBusy: MinConns counts connections whatever their
// load, so a multiplexed pool keeps two open to spread leases over, where
// MinIdle (connections with no stream) would dial whenever both are busy.
func TestMinConnsKeptOpenWhileBusy(t *testing.T) {
	var why reasons
	p, d := newTestPool(t, Config[*fakeConn]{
		MaxConns: 4, MaxStreams: 8, MinConns: 2, MaxIdleTime: 10 * time.Millisecond,
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
	time.Sleep(30 * time.Millisecond) // several maintenance passes and idle times
	if s := p.Stats(); s.TotalConns != 2 || d.dials.Load() != 2 {
		t.Fatalf("both busy: %+v, %d dials; want the same 2 connections", s, d.dials.Load())
	}
	// Idle past MaxIdleTime, yet not reaped below MinConns.
	a.Release()
	b.Release()
	time.Sleep(30 * time.Millisecond)
	if s := p.Stats(); s.TotalConns != 2 || why.count(ReasonIdle) != 0 {
		t.Fatalf("idle: %+v, reasons %v; want 2 open, none reaped", s, why.list)
	}
	// One broken: the pool dials its replacement on its own.
	l := mustAcquire(t, p)
	l.Discard()
	eventually(t, "a replacement dialled", func() bool { return p.Stats().TotalConns == 2 && d.dials.Load() == 3 })
}

// TestMinConnsExclusive: in exclusive mode MinConns is a floor on open
// connections; idle reaping stops at it even with MinIdle 0.
func TestMinConnsExclusive(t *testing.T) {
	var why reasons
	p, _ := newTestPool(t, Config[*fakeConn]{
		MaxConns: 4, MinConns: 2, MaxIdleTime: 10 * time.Millisecond,
		Hooks: Hooks[*fakeConn]{OnDisconnect: why.hook},
	})
	eventually(t, "MinConns dialled in the background", func() bool { return p.Stats().TotalConns == 2 })
	var leases []Lease[*fakeConn]
	for range 4 {
		leases = append(leases, mustAcquire(t, p))
	}
	for _, l := range leases {
		l.Release()
	}
	eventually(t, "idle connections reaped down to MinConns", func() bool { return why.count(ReasonIdle) == 2 })
	time.Sleep(30 * time.Millisecond)
	if s := p.Stats(); s.TotalConns != 2 || why.count(ReasonIdle) != 2 {
		t.Fatalf("%+v, reasons %v; want 2 open after 2 reaped", s, why.list)
	}
}

// TestFloorFillsWithoutWaitingForMaintenance: a MinIdle floor larger than
// MaxDialing fills dial after dial, each dial's end starting the next,
// instead of MaxDialing per maintenance tick (a second). The bound below
// is most of one tick, against the few milliseconds the dials take.
func TestFloorFillsWithoutWaitingForMaintenance(t *testing.T) {
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 16, MinIdle: 16, MaxDialing: 2,
		Dial: func(context.Context) (*fakeConn, error) {
			time.Sleep(time.Millisecond)
			return &fakeConn{}, nil
		}})
	deadline := time.Now().Add(800 * time.Millisecond)
	for p.Stats().IdleConns < 16 {
		if time.Now().After(deadline) {
			t.Fatalf("MinIdle 16 with MaxDialing 2: %d idle after 800ms, so refill waited for maintenance's tick", p.Stats().IdleConns)
		}
		time.Sleep(5 * time.Millisecond)
	}
}
