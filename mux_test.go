package shoal

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestMultiplexedLeastLoadedAndBounded(t *testing.T) {
	p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 3, MaxStreams: 4})
	var leases []Lease[*fakeConn]
	// 4 streams fit on the first connection before a second is dialled.
	for i := 0; i < 4; i++ {
		leases = append(leases, mustAcquire(t, p))
	}
	if d.dials.Load() != 1 {
		t.Fatalf("dials = %d after 4 leases of MaxStreams 4, want 1", d.dials.Load())
	}
	leases = append(leases, mustAcquire(t, p))
	if d.dials.Load() != 2 {
		t.Fatalf("dials = %d after the 5th lease, want 2", d.dials.Load())
	}
	// Free two streams on the first connection: it now has 2 of 4 in use,
	// the second 1 of 4: new leases go to the second until they even out.
	first := leases[0].Value()
	leases[0].Release()
	leases[1].Release()
	leases = leases[2:]
	l := mustAcquire(t, p)
	if l.Value() == first {
		t.Fatalf("lease went to the busier connection")
	}
	leases = append(leases, l)
	s := p.Stats()
	if s.Leases != 4 || s.TotalConns != 2 || s.InUseConns != 2 {
		t.Fatalf("stats %+v", s)
	}
	for _, l := range leases {
		l.Release()
	}
}

func TestMultiplexedNeverOverStreams(t *testing.T) {
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 2, MaxStreams: 3})
	var wg sync.WaitGroup
	for g := 0; g < 24; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				l := mustAcquire(t, p)
				if n := l.Value().inUse.Add(1); n > 3 {
					t.Errorf("conn %d has %d leases, MaxStreams 3", l.Value().id, n)
				}
				l.Value().inUse.Add(-1)
				l.Release()
			}
		}()
	}
	wg.Wait()
	if s := p.Stats(); s.TotalConns > 2 || s.Leases != 0 || s.Acquires != 24*200 {
		t.Fatalf("stats %+v", s)
	}
}

func TestMultiplexedDiscardRetiresAfterDrain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 1, MaxStreams: 2})
		a, b := mustAcquire(t, p), mustAcquire(t, p)
		c := a.Value()
		a.Discard()
		synctest.Wait()
		if c.closed.Load() {
			t.Fatal("discard closed a connection another lease still uses")
		}
		b.Release()
		synctest.Wait()
		if !c.closed.Load() {
			t.Fatal("discarded connection not closed once drained")
		}
		l := mustAcquire(t, p)
		if l.Value() == c || d.dials.Load() != 2 {
			t.Fatal("expected a fresh connection after the discard")
		}
		l.Release()
	})
}

func TestMultiplexedRetireAndStreamLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 3, MaxStreams: 10})
		a := mustAcquire(t, p)
		a.SetStreamLimit(1) // the server allows one stream on this connection
		b := mustAcquire(t, p)
		if b.Value() == a.Value() {
			t.Fatal("stream limit ignored")
		}
		b.Retire()
		c := mustAcquire(t, p)
		if c.Value() == b.Value() {
			t.Fatal("a retired connection took a new lease")
		}
		retired := b.Value()
		b.Release()
		synctest.Wait()
		if !retired.closed.Load() {
			t.Fatal("retired connection not closed when its last lease ended")
		}
		a.Release()
		c.Release()
		if d.dials.Load() != 3 {
			t.Fatalf("dials = %d, want 3", d.dials.Load())
		}
	})
}

func TestMultiplexedWaitersServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, MaxStreams: 2})
		a, b := mustAcquire(t, p), mustAcquire(t, p)
		got := acquireAsync(context.Background(), p)
		wantWaiters(t, p, 1)
		a.Release()
		l := <-got
		if l.rec == nil {
			t.Fatal("the waiter failed")
		}
		if l.Value() != b.Value() {
			t.Fatal("waiter got a different connection")
		}
		l.Release()
		b.Release()
		ctx := context.Background()
		if err := p.Do(ctx, func(*fakeConn) error { return nil }); err != nil {
			t.Fatal(err)
		}
	})
}

func TestMultiplexedStreamLimitHookAndDialsPerStream(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDialer{block: make(chan struct{})}
		p, _ := newTestPool(t, Config[*fakeConn]{
			Dial: d.dial, Close: d.close, MaxConns: 4, MaxStreams: 10, MaxDialing: 4,
			Hooks: Hooks[*fakeConn]{StreamLimit: func(*fakeConn) int { return 3 }},
		})
		// 6 waiters need one dial at MaxStreams 10, not six.
		var got []<-chan Lease[*fakeConn]
		for i := 0; i < 6; i++ {
			got = append(got, acquireAsync(context.Background(), p))
		}
		wantWaiters(t, p, 6) // and every dial they started is blocked in Dial
		if n := d.dials.Load(); n != 1 {
			t.Fatalf("%d dials for 6 waiters on a multiplexed pool, want 1", n)
		}
		close(d.block)
		// The connection joins with its own limit of 3: the other 3 waiters
		// need a second connection.
		var leases []Lease[*fakeConn]
		for _, w := range got {
			l := <-w
			if l.rec == nil {
				t.Fatal("a waiter failed")
			}
			leases = append(leases, l)
		}
		perConn := map[*fakeConn]int{}
		for _, l := range leases {
			perConn[l.Value()]++
		}
		for c, n := range perConn {
			if n > 3 {
				t.Fatalf("connection %d got %d leases, its StreamLimit is 3", c.id, n)
			}
		}
		for _, l := range leases {
			l.Release()
		}
	})
}

// Idle multiplexed connections are reaped after MaxIdleTime down to
// MinConns open connections, busy ones counted; a connection with a lease
// out is never reaped.
func TestMultiplexedIdleReapedToMinConns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const maxIdle = 50 * time.Millisecond
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 3, MaxStreams: 2, MinConns: 2, MaxIdleTime: maxIdle})
		var leases []Lease[*fakeConn]
		for range 6 {
			leases = append(leases, mustAcquire(t, p))
		}
		if s := p.Stats(); s.TotalConns != 3 {
			t.Fatalf("6 leases at 2 streams: %d connections, want 3", s.TotalConns)
		}
		// One lease stays out on its connection, which must survive; of the
		// two others, both idle, one goes and one stays for MinConns.
		kept := leases[0]
		for _, l := range leases[1:] {
			if l.Value() != kept.Value() {
				l.Release()
			}
		}
		for _, l := range leases[1:] {
			if l.Value() == kept.Value() {
				l.Release()
			}
		}
		time.Sleep(2 * maxIdle) // past MaxIdleTime and a maintenance tick
		synctest.Wait()
		if s := p.Stats(); s.TotalConns != 2 || s.Closed != 1 {
			t.Fatalf("%s idle: %+v; want one idle connection reaped", 2*maxIdle, s)
		}
		time.Sleep(3 * maxIdle)
		synctest.Wait()
		if s := p.Stats(); s.TotalConns != 2 || s.IdleConns != 1 || s.Leases != 1 || kept.Value().closed.Load() {
			t.Fatalf("after idling with one lease out: %+v (its connection closed: %v)", s, kept.Value().closed.Load())
		}
		// Both idle now, and both stay: MinConns counts them whatever their load.
		kept.Release()
		time.Sleep(3 * maxIdle)
		synctest.Wait()
		if s := p.Stats(); s.TotalConns != 2 || s.IdleConns != 2 {
			t.Fatalf("all idle past MaxIdleTime: %+v; want MinConns (2) kept", s)
		}
		if n := d.openConns(); n != 2 {
			t.Fatalf("%d connections open at the dialer, want 2", n)
		}
		// Kept, not reaped and dialled again.
		if s := p.Stats(); s.Closed != 1 || s.Dials != 3 {
			t.Fatalf("%+v; want the one reaped connection closed and no dial since the 3 for the leases", s)
		}
	})
}

// Among equally loaded connections the pick goes round, rather than always
// landing on the first: short calls among long ones spread over all the
// connections.
func TestMultiplexedTiesGoRound(t *testing.T) {
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 3, MaxStreams: 2})
	var leases []Lease[*fakeConn]
	for range 6 {
		leases = append(leases, mustAcquire(t, p))
	}
	// One lease stays on each connection: all three tie at one.
	seen := map[*fakeConn]bool{}
	var long []Lease[*fakeConn]
	for _, l := range leases {
		if seen[l.Value()] {
			l.Release()
			continue
		}
		seen[l.Value()] = true
		long = append(long, l)
	}
	defer func() {
		for _, l := range long {
			l.Release()
		}
	}()
	if len(long) != 3 {
		t.Fatalf("%d connections, want 3", len(long))
	}
	picked := map[*fakeConn]int{}
	for range 6 {
		l := mustAcquire(t, p)
		picked[l.Value()]++
		l.Release()
	}
	if len(picked) != 3 {
		t.Fatalf("6 short leases among 3 equally loaded connections went to %d of them, want all 3", len(picked))
	}
}

// Among idle connections the last to go idle is picked: a lone caller's
// leases, one after another, keep to one connection instead of going round
// them all and waking a cold one each time.
func TestMultiplexedIdleTieGoesToLastUsed(t *testing.T) {
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 3, MaxStreams: 2, MinConns: 3})
	WaitFor(t, "3 connections open", func() bool { return p.Stats().TotalConns == 3 })
	first := mustAcquire(t, p)
	last := first.Value()
	first.Release()
	for i := range 6 {
		l := mustAcquire(t, p)
		l.Release()
		if l.Value() != last {
			t.Fatalf("lease %d went to another idle connection than the one last used", i)
		}
	}
	// Under load the pick still spreads: a second lease while one is held
	// goes to an idle connection.
	a, b := mustAcquire(t, p), mustAcquire(t, p)
	if a.Value() == b.Value() {
		t.Fatal("two leases at once went to one connection while others were idle")
	}
	a.Release()
	b.Release()
}

// A crowd that arrives at once at a full multiplexed pool gets one dial per
// MaxStreams waiters, not one per waiter (a dial counts as MaxStreams
// future streams), and is served as those dials land: when a connection
// serves fewer streams than its dial was counted for (StreamLimit), the
// dial's end starts the next one.
// shoalhttp's HTTP/2 backend relies on both and no longer works around
// them (MaxDialing 1, a TryAcquire after each waited acquire).
func TestMuxCrowdDialsPerMaxStreams(t *testing.T) {
	for _, limit := range []int{4, 2} {
		t.Run(fmt.Sprintf("StreamLimit=%d", limit), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := &fakeDialer{block: make(chan struct{})}
				cfg := Config[*fakeConn]{MaxConns: 8, MaxStreams: 4, Dial: d.dial}
				cfg.Hooks.StreamLimit = func(*fakeConn) int { return limit }
				p, _ := newTestPool(t, cfg)
				const crowd = 10
				var got []<-chan Lease[*fakeConn]
				for range crowd {
					got = append(got, acquireAsync(context.Background(), p))
				}
				wantWaiters(t, p, crowd) // and the dials they started are blocked in Dial
				if n := d.dials.Load(); n != (crowd+3)/4 {
					t.Fatalf("%d dials for a crowd of %d at 4 streams a connection, want %d", n, crowd, (crowd+3)/4)
				}
				close(d.block)
				var leases []Lease[*fakeConn]
				for _, w := range got {
					l := <-w
					if l.rec == nil {
						t.Fatal("a waiter in the crowd failed")
					}
					leases = append(leases, l)
				}
				s := p.Stats()
				if want := (crowd + limit - 1) / limit; s.TotalConns != want || s.Leases != crowd {
					t.Errorf("%d connections for %d leases, want %d for %d (stats %+v)", s.TotalConns, s.Leases, want, crowd, s)
				}
				for _, l := range leases {
					l.Release()
				}
			})
		})
	}
}

// Raising a connection's stream limit (Lease.SetStreamLimit) serves the
// callers waiting at once.
func TestSetStreamLimitServesTheWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, MaxStreams: 4,
			Hooks: Hooks[*fakeConn]{StreamLimit: func(*fakeConn) int { return 1 }}})
		l1 := mustAcquire(t, p)
		w := acquireLater(p, time.Minute)
		wantWaiters(t, p, 1)
		l1.SetStreamLimit(2)
		wantWaiters(t, p, 0)
		received(t, w).Release()
		l1.Release()
	})
}
