package shoal

import (
	"context"
	"sync"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal/internal/failrun"
)

// avoidSet is an Avoid function over the connections a test marks held up.
type avoidSet struct {
	mu sync.Mutex
	m  map[*fakeConn]bool
}

// set marks c held up.
func (s *avoidSet) set(c *fakeConn) { s.mu.Lock(); s.m[c] = true; s.mu.Unlock() }

// avoid is the Config.Avoid of the test's pool.
func (s *avoidSet) avoid(c *fakeConn) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.m[c]
}

// newAvoidPool is newTestPool with cfg's Avoid set to a fresh avoidSet's,
// which it returns for the test to mark connections held up.
func newAvoidPool(t *testing.T, cfg Config[*fakeConn]) (*Pool[*fakeConn], *fakeDialer, *avoidSet) {
	t.Helper()
	av := &avoidSet{m: map[*fakeConn]bool{}}
	cfg.Avoid = av.avoid
	p, d := newTestPool(t, cfg)
	return p, d, av
}

// With MaxWaiters leaving no room in the queue, a held-up connection takes
// the lease: the caller could not wait for a new one.
func TestAvoidedConnectionTakesTheLeaseWhenTheQueueIsFull(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d, av := newAvoidPool(t, Config[*fakeConn]{MaxConns: 2, MaxStreams: 3, MaxWaiters: 1})
		l1 := mustAcquire(t, p)
		av.set(l1.Value())
		block := d.blockDials()
		w := acquireLater(p, time.Minute)
		synctest.Wait()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		l2, err := p.Acquire(ctx)
		cancel()
		if err != nil || l2.Value() != l1.Value() {
			t.Errorf("Acquire at MaxWaiters = %v, %v; want a stream of the held-up connection", l2.Value(), err)
		}
		close(block)
		wl := <-w
		for _, l := range []Lease[*fakeConn]{l1, l2, wl} {
			if l.rec != nil {
				l.Release()
			}
		}
	})
}

// With room in the queue, even for one caller alone (MaxWaiters 1), a
// caller that finds only a held-up connection waits for the new one rather
// than take it: it has its place in the queue when it looks again, and that
// place is the room MaxWaiters gives it.
func TestAvoidedConnectionLeftToANewOneWhenTheQueueHasRoom(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d, av := newAvoidPool(t, Config[*fakeConn]{MaxConns: 2, MaxStreams: 3, MaxWaiters: 1})
		l1 := mustAcquire(t, p)
		av.set(l1.Value())
		w := acquireLater(p, time.Minute)
		synctest.Wait()
		var l Lease[*fakeConn]
		select {
		case l = <-w:
		default:
		}
		if l.rec != nil && l.Value() == l1.Value() {
			t.Errorf("with an empty queue and MaxWaiters 1 the caller took the held-up connection (dials %d)", d.dials.Load())
		}
		if l.rec == nil {
			l = <-w
		}
		l.Release()
		l1.Release()
	})
}

// While dials back off after a failure, a held-up connection takes the
// lease: no new one is coming soon.
func TestAvoidedConnectionTakesTheLeaseWhileDialsBackOff(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d, av := newAvoidPool(t, Config[*fakeConn]{MaxConns: 2, MaxStreams: 3})
		l1 := mustAcquire(t, p)
		av.set(l1.Value())
		d.mu.Lock()
		d.err = errBoom
		d.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), time.Millisecond)
		l0, err := p.Acquire(ctx) // queues; its dial fails: backoff
		cancel()
		if err == nil {
			l0.Release() // the held-up connection, once the dial failed
		}
		ctx, cancel = context.WithTimeout(context.Background(), 5*time.Millisecond)
		l2, err := p.Acquire(ctx)
		cancel()
		if err != nil || l2.Value() != l1.Value() {
			t.Errorf("Acquire while backing off = %v, %v; want the held-up connection", l2.Value(), err)
		}
		if l2.rec != nil {
			l2.Release()
		}
		l1.Release()
	})
}

// A caller left to wait for a new connection rather than take a held-up one
// takes the held-up one as soon as that dial fails: the pool backs off, and
// no new connection is coming soon. Here every dial fails (a server at its
// connection limit, say), and the caller would otherwise wait until its
// deadline beside a connection with free streams.
func TestQueuedCallerTakesTheAvoidedConnectionWhenTheDialFails(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d, av := newAvoidPool(t, Config[*fakeConn]{MaxConns: 2, MaxStreams: 3})
		l1 := mustAcquire(t, p)
		defer l1.Release()
		av.set(l1.Value())
		d.mu.Lock()
		d.err = errBoom
		d.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		start := time.Now()
		l2, err := p.Acquire(ctx)
		if err != nil || l2.Value() != l1.Value() {
			t.Fatalf("after %v (%d dials): Acquire = %v, %v; want the held-up connection", time.Since(start), d.dials.Load(), l2.Value(), err)
		}
		if waited := time.Since(start); waited >= failrun.BackoffMin {
			t.Errorf("the caller waited %v, past the next try; want the held-up connection as the dial failed", waited)
		}
		l2.Release()
	})
}

// Passing over a held-up connection, the lease goes to the least loaded of
// the others: connections carrying 1 (held up), 2 and 3 leases give the
// next to the one with 2.
func TestAvoidPassesToTheLeastLoadedOther(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _, av := newAvoidPool(t, Config[*fakeConn]{MaxConns: 3, MaxStreams: 4})
		keep, byConn := stairLeases(t, p, 12) // conn 1 keeps 1, conn 2 keeps 2, conn 3 keeps 3
		av.set(byConn[1][0].Value())
		l := mustAcquire(t, p)
		if l.Value().id != 2 {
			t.Errorf("lease went to conn %d, want 2 (least loaded not held up)", l.Value().id)
		}
		l.Release()
		for _, l := range keep {
			l.Release()
		}
	})
}

// A caller waiting for the new connection takes a stream freed on any
// connection first, a held-up one too: whichever comes first.
func TestStreamFreedOnAHeldUpConnectionServesAWaiter(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d, av := newAvoidPool(t, Config[*fakeConn]{MaxConns: 2, MaxStreams: 3})
		l1 := mustAcquire(t, p)
		l2 := mustAcquire(t, p)
		av.set(l1.Value())
		block := d.blockDials()
		w := acquireLater(p, time.Minute)
		wantWaiters(t, p, 1)
		l2.Release()
		wantWaiters(t, p, 0)
		close(block)
		received(t, w).Release()
		l1.Release()
	})
}

// heldUpAtAShareOfOne sets up a multiplexed pool (MaxStreams 3, and
// busyStreams, 0 for the default) beside a peer under a LocalBudget of 2:
// the peer's demand gone, the pool holds one connection at a share of 1
// that an ask could raise, and its one lease l1 is on a connection Avoid
// reports held up. The caller releases l1 (a second Release does nothing).
func heldUpAtAShareOfOne(t *testing.T, busyStreams int) (p, peer *Pool[*fakeConn], l1 Lease[*fakeConn]) {
	t.Helper()
	b := mustBudget(t, 2, BudgetIdleTime(time.Second))
	peer, _ = newTestPool(t, Config[*fakeConn]{Name: "peer", MaxConns: 2, Budget: b})
	p, _, av := newAvoidPool(t, Config[*fakeConn]{Name: "mux", MaxConns: 2, MaxStreams: 3, BusyStreams: busyStreams, Budget: b})
	x := mustAcquire(t, peer)
	l1 = mustAcquire(t, p)
	x.Release()
	time.Sleep(2 * time.Second) // past IdleTime: the peer wants none, and keeps its idle connection
	synctest.Wait()
	if s := p.Stats(); s.TotalConns != 1 || s.Share != 1 {
		l1.Release()
		t.Fatalf("before: mux %d open at share %d, want 1 and 1", s.TotalConns, s.Share)
	}
	av.set(l1.Value())
	return p, peer, l1
}

// TestAvoidedConnectionTakenWhenAnAskBringsNone: at a share the budget
// could raise, a caller who finds only a held-up connection still takes a
// stream on it when the division would give the pool no more: its demand,
// in connections of BusyStreams (here MaxStreams) leases, with this caller,
// is the one connection it holds. Waiting for the ask would be waiting for
// nothing, and this caller would fail at its deadline.
func TestAvoidedConnectionTakenWhenAnAskBringsNone(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, peer, l1 := heldUpAtAShareOfOne(t, 0)
		defer l1.Release()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		start := time.Now()
		l2, err := p.Acquire(ctx)
		if err != nil {
			t.Fatalf("after %v: %v", time.Since(start), err)
		}
		if l2.Value() != l1.Value() || time.Since(start) != 0 {
			t.Fatalf("the caller took another connection after %v; want the held-up one at once", time.Since(start))
		}
		if s := peer.Stats(); s.TotalConns != 1 {
			t.Fatalf("the peer holds %d connections, want its idle one kept", s.TotalConns)
		}
		l2.Release()
	})
}

// At a budget's share below MaxConns, with a budget that divides again when
// asked (LocalBudget), a caller that finds only a held-up connection waits
// for the new one the ask may bring, rather than take the held-up one: here
// a peer keeps an idle connection of a budget of 2, and gives it up. The
// division goes by demand, so the pool counts a connection per lease
// (BusyStreams 1, as shoalpgx's shared connections do): the waiting caller
// is a connection's worth of demand.
func TestAvoidedConnectionLeftToTheConnectionAnAskBrings(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, peer, l1 := heldUpAtAShareOfOne(t, 1)
		defer l1.Release()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		l2, err := p.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if l2.Value() == l1.Value() {
			t.Fatal("the caller took the held-up connection at a share the budget could raise")
		}
		if s := peer.Stats(); s.TotalConns != 0 {
			t.Fatalf("the peer still holds %d connections", s.TotalConns)
		}
		l2.Release()
	})
}
