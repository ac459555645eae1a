package shoal

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// With Fill, new leases go to the most loaded connection that Fill accepts,
// and spread least-loaded first once it accepts none.
func TestFillPacksWhileAccepted(t *testing.T) {
	var refuse *fakeConn // a connection Fill turns down, whatever its load
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 3, MaxStreams: 8,
		Fill: func(c *fakeConn, streams int) bool { return c != refuse && streams < 4 }})
	var held []Lease[*fakeConn]
	defer func() {
		for _, l := range held {
			l.Release()
		}
	}()
	// Three connections, filled to MaxStreams each (a new one is dialled
	// only when the open ones are full), then every lease released but one:
	// three open, one of them loaded.
	for range 24 {
		held = append(held, mustAcquire(t, p))
	}
	if s := p.Stats(); s.TotalConns != 3 {
		t.Fatalf("stats %+v, want 3 connections", s)
	}
	first := held[0].Value()
	var keep Lease[*fakeConn]
	for _, l := range held {
		if l.Value() == first && keep.Value() == nil {
			keep = l
			continue
		}
		l.Release()
	}
	held = []Lease[*fakeConn]{keep}

	// The loaded connection takes leases up to the 4 Fill accepts, though
	// two idle ones stand beside it.
	for i := range 3 {
		l := mustAcquire(t, p)
		held = append(held, l)
		if l.Value() != first {
			t.Fatalf("lease %d went to an idle connection while Fill accepted the loaded one", i+2)
		}
	}
	// At 4 Fill says no: the next lease goes to the least-loaded one.
	l := mustAcquire(t, p)
	held = append(held, l)
	if l.Value() == first {
		t.Fatal("lease went to the connection Fill turned down")
	}
	// And a connection Fill turns down is passed over while loaded less.
	refuse = l.Value()
	l = mustAcquire(t, p)
	held = append(held, l)
	if l.Value() == first || l.Value() == refuse {
		t.Fatalf("lease went to a connection Fill turned down, not to the idle one")
	}
}

// Fill is for multiplexed connections only.
func TestFillExclusiveIsAnError(t *testing.T) {
	err := (&Config[*fakeConn]{Dial: (&fakeDialer{}).dial, Fill: func(*fakeConn, int) bool { return true }}).Validate()
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != "Fill" {
		t.Fatalf("Validate = %v, want a ConfigError naming Fill", err)
	}
}

// With Avoid, a loaded connection it reports takes no new lease while
// another can: the next goes to a less favoured one, and to the avoided
// connection only once every other is full.
func TestAvoidPassesOverAHeldUpConnection(t *testing.T) {
	var avoid *fakeConn
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 2, MaxStreams: 3,
		Avoid: func(c *fakeConn) bool { return c == avoid }})
	var held []Lease[*fakeConn]
	defer func() {
		for _, l := range held {
			l.Release()
		}
	}()
	// Two connections: the first filled (a new one is dialled only when
	// the open ones are full), then one lease on the second.
	for range 4 {
		held = append(held, mustAcquire(t, p))
	}
	first, second := held[0].Value(), held[3].Value()
	if first == second || p.Stats().TotalConns != 2 {
		t.Fatalf("stats %+v, want 2 connections", p.Stats())
	}
	// Free two of the first's streams: it carries 1, the second 1, and the
	// tie would go to either. With the second avoided, the first takes it.
	held[1].Release()
	held[2].Release()
	held = []Lease[*fakeConn]{held[0], held[3]}
	avoid = second
	for i := range 2 {
		l := mustAcquire(t, p)
		held = append(held, l)
		if l.Value() != first {
			t.Fatalf("lease %d went to the avoided connection while the other had room", i+1)
		}
	}
	// The first is full: the avoided one is all that is left, and takes it.
	l := mustAcquire(t, p)
	held = append(held, l)
	if l.Value() != second {
		t.Fatal("the avoided connection was passed over with every other full")
	}
}

// A caller who finds only held-up connections waits for the one the pool
// opens, which takes milliseconds, rather than queue behind a slow request
// for as long as it runs; where it cannot wait (TryAcquire), or the pool
// cannot open another (at MaxConns), a held-up connection takes it.
func TestAvoidedConnectionLeftToANewOne(t *testing.T) {
	var mu sync.Mutex
	avoided := map[*fakeConn]bool{}
	avoid := func(c *fakeConn) {
		mu.Lock()
		avoided[c] = true
		mu.Unlock()
	}
	p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 2, MaxStreams: 3,
		Avoid: func(c *fakeConn) bool { mu.Lock(); defer mu.Unlock(); return avoided[c] }})
	held := []Lease[*fakeConn]{mustAcquire(t, p)}
	defer func() {
		for _, l := range held {
			l.Release()
		}
	}()
	first := held[0].Value()
	avoid(first)
	block := make(chan struct{})
	d.mu.Lock()
	d.block = block // the second connection opens when the test says
	d.mu.Unlock()

	l, err := p.TryAcquire()
	if err != nil || l.Value() != first {
		t.Fatalf("TryAcquire = %v, %v: want a stream of the held-up connection, the only one open", l.Value(), err)
	}
	l.Release()

	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	got := acquireAsync(ctx, p)
	close(block)
	l = <-got
	if l.Value() == nil {
		t.Fatal("Acquire failed")
	}
	held = append(held, l)
	if l.Value() == first {
		t.Fatal("Acquire queued behind the held-up connection while the pool could open another")
	}

	// At MaxConns, with both held up, the least loaded takes the lease.
	avoid(l.Value())
	l = mustAcquire(t, p)
	held = append(held, l)
	if s := p.Stats(); s.TotalConns != 2 {
		t.Fatalf("stats %+v, want 2 connections", s)
	}
}

// Avoid is for multiplexed connections only.
func TestAvoidExclusiveIsAnError(t *testing.T) {
	err := (&Config[*fakeConn]{Dial: (&fakeDialer{}).dial, Avoid: func(*fakeConn) bool { return true }}).Validate()
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Field != "Avoid" {
		t.Fatalf("Validate = %v, want a ConfigError naming Avoid", err)
	}
}

// Fill sends a new lease to the most loaded connection it accepts: of
// connections carrying 1 and 2 leases, the one with 2.
func TestFillPicksTheMostLoadedItAccepts(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 2, MaxStreams: 8,
			Fill: func(c *fakeConn, streams int) bool { return true }})
		keep, _ := stairLeases(t, p, 16) // conn 1 keeps 1, conn 2 keeps 2
		l := mustAcquire(t, p)
		if l.Value().id != 2 {
			t.Errorf("lease went to conn %d, want 2, the most loaded Fill accepts", l.Value().id)
		}
		l.Release()
		for _, l := range keep {
			l.Release()
		}
	})
}
