package shoal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

func TestSetMaxConnsGrowingServesWaitersByNewDials(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d, waiters := fullPoolWithWaiters(t, 5)

		// Past the MaxConns the pool was made with: its slot table grows.
		if err := p.SetMaxConns(6); err != nil {
			t.Fatal(err)
		}
		for i, w := range waiters {
			l := <-w
			if l.rec == nil {
				t.Fatalf("waiter %d failed after the pool grew", i)
			}
			defer l.Release()
		}
		if got := d.openConns(); got != 6 {
			t.Fatalf("%d connections open, want 6", got)
		}
		if s := p.Stats(); s.MaxConns != 6 || s.TotalConns != 6 || s.InUseConns != 6 {
			t.Fatalf("Stats after growing: %+v", s)
		}
	})
}

func TestSetMaxConnsShrinkingClosesIdleNowAndLeasedOnRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, parts := range []int{1, 3} {
			p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 5, Partitions: parts})
			var held []Lease[*fakeConn]
			for range 5 {
				held = append(held, mustAcquire(t, p))
			}
			held[3].Release()
			held[4].Release()
			held = held[:3]

			if err := p.SetMaxConns(1); err != nil {
				t.Fatal(err)
			}
			// The two idle ones at once.
			synctest.Wait()
			if open, s := d.openConns(), p.Stats(); open != 3 || s.IdleConns != 0 || s.Closed != 2 {
				t.Fatalf("partitions %d: after the shrink %d open, stats %+v", parts, open, s)
			}
			// Leased ones as they come back, down to the limit and no further.
			held[0].Release()
			synctest.Wait()
			if open := d.openConns(); open != 2 {
				t.Fatalf("partitions %d: %d open after the first release, want 2", parts, open)
			}
			held[1].Release()
			synctest.Wait()
			if open := d.openConns(); open != 1 {
				t.Fatalf("partitions %d: %d open after the second release, want 1", parts, open)
			}
			held[2].Release()
			synctest.Wait()
			if s := p.Stats(); d.openConns() != 1 || s.IdleConns != 1 {
				t.Fatalf("partitions %d: the last connection closed too: %+v", parts, s)
			}
			l := mustAcquire(t, p)
			l.Release()
			if got := d.dials.Load(); got != 5 {
				t.Fatalf("partitions %d: %d dials, want 5 (the one kept is reused)", parts, got)
			}
		}
	})
}

func TestSetMaxConnsShrinkingMakesCallersWaitNeverFail(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 3})
		a, b, c := mustAcquire(t, p), mustAcquire(t, p), mustAcquire(t, p)
		if err := p.SetMaxConns(1); err != nil {
			t.Fatal(err)
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		w := acquireAsync(ctx, p)
		wantWaiters(t, p, 1)

		// Two releases close (3 open, limit 1); the third hands its
		// connection to the waiter.
		a.Release()
		b.Release()
		synctest.Wait()
		select {
		case l := <-w:
			t.Fatalf("the waiter got a lease (%v) while the pool was above its limit", l)
		default:
		}
		c.Release()
		l := <-w
		if l.rec == nil {
			t.Fatal("the waiter failed")
		}
		l.Release()
		synctest.Wait()
		if open, s := d.openConns(), p.Stats(); open != 1 || s.Closed != 2 {
			t.Fatalf("%d open, stats %+v", open, s)
		}

		// A caller whose context ends while the pool is full and shrunk gets
		// its context's error, not a resize error.
		held := mustAcquire(t, p)
		defer held.Release()
		short, cancelShort := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancelShort()
		if _, err := p.Acquire(short); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire on a full shrunk pool: %v", err)
		}
	})
}

func TestSetMaxConnsShrinkingADialInFlightClosesItOnArrival(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		block := make(chan struct{})
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 2})
		held := mustAcquire(t, p)
		d.mu.Lock()
		d.block = block
		d.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		w := acquireAsync(ctx, p)
		synctest.Wait()
		if n := d.dials.Load(); n != 2 {
			t.Fatalf("%d dials, want the second in flight for the waiter", n)
		}
		if err := p.SetMaxConns(1); err != nil {
			t.Fatal(err)
		}
		close(block)
		// The new connection is one too many: closed on arrival; the waiter
		// gets the held one when it comes back.
		synctest.Wait()
		if n := d.closes.Load(); n != 1 {
			t.Fatalf("%d connections closed, want the late dial's", n)
		}
		held.Release()
		l := <-w
		if l.rec == nil {
			t.Fatal("the waiter failed")
		}
		l.Release()
		if open := d.openConns(); open != 1 {
			t.Fatalf("%d open, want 1", open)
		}
	})
}

func TestSetMaxConnsMultiplexedRetiresTheLeastLoaded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 3, MaxStreams: 2, MinConns: 3})
		if err := p.Warm(context.Background()); err != nil {
			t.Fatal(err)
		}
		// Five leases spread over three connections: 2, 2, 1.
		var held []Lease[*fakeConn]
		for range 5 {
			held = append(held, mustAcquire(t, p))
		}
		perConn := map[*fakeConn][]Lease[*fakeConn]{}
		for _, l := range held {
			perConn[l.Value()] = append(perConn[l.Value()], l)
		}
		if err := p.SetMaxConns(2); err != nil {
			t.Fatal(err)
		}
		// The connection with one lease retires: it takes no new lease, and
		// closes once that lease ends; the other two stay.
		var light *fakeConn
		for c, ls := range perConn {
			if len(ls) == 1 {
				light = c
			}
		}
		if light == nil {
			t.Fatalf("leases not spread as expected: %v", perConn)
		}
		perConn[light][0].Release()
		synctest.Wait()
		if !light.closed.Load() {
			t.Fatal("the retired connection stayed open after its last lease")
		}
		for c, ls := range perConn {
			if c == light {
				continue
			}
			for _, l := range ls {
				l.Release()
			}
		}
		if open := d.openConns(); open != 2 {
			t.Fatalf("%d open, want 2", open)
		}
		if s := p.Stats(); s.MaxConns != 2 || s.TotalConns != 2 {
			t.Fatalf("Stats: %+v", s)
		}
	})
}

func TestSetMaxConnsBelowTheFloorsKeepsThemOnlyToTheLimit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 4, MinIdle: 4})
		if err := p.Warm(context.Background()); err != nil {
			t.Fatal(err)
		}
		if err := p.SetMaxConns(2); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if open := d.openConns(); open != 2 {
			t.Fatalf("%d open after the shrink, want 2", open)
		}
		// Maintenance must not dial back up to MinIdle.
		passes := p.life.passes.Load()
		p.kickMaintenance()
		synctest.Wait()
		if p.life.passes.Load() == passes {
			t.Fatal("no maintenance pass after a kick")
		}
		if open := d.openConns(); open != 2 {
			t.Fatalf("%d open after maintenance, want 2", open)
		}
		// Growing again refills the floor.
		if err := p.SetMaxConns(4); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if open := d.openConns(); open != 4 {
			t.Fatalf("%d open after growing back, want MinIdle (4) refilled", open)
		}
	})
}

func TestSetMaxConnsRefusesBadInput(t *testing.T) {
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 2})
	for _, n := range []int{0, -1, maxConnsLimit + 1} {
		err := p.SetMaxConns(n)
		if err == nil || !strings.Contains(err.Error(), "SetMaxConns") || !strings.Contains(err.Error(), "must be in [1, 2147483647]") {
			t.Errorf("SetMaxConns(%d) = %v", n, err)
		}
	}
	if s := p.Stats(); s.MaxConns != 2 {
		t.Fatalf("a refused SetMaxConns changed the limit: %+v", s)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if err := p.SetMaxConns(3); !errors.Is(err, ErrClosed) || !strings.Contains(err.Error(), fmt.Sprintf("%q", p.Stats().Name)) {
		t.Fatalf("SetMaxConns after Close: %v; want ErrClosed, naming the pool", err)
	}
}

// TestSetMaxConnsUnderLoad resizes a busy pool up and down and checks,
// throughout, that what is open at the dialer never exceeds the larger of
// the limits in force since the pool was last within its limit.
func TestSetMaxConnsUnderLoad(t *testing.T) {
	if testing.Short() {
		t.Skip("puts the pool under a second or two of real load while it resizes; runs without -short")
	}
	d := &fakeDialer{}
	var mu sync.Mutex
	allowed := 8
	opened := 0
	dial := func(ctx context.Context) (*fakeConn, error) {
		c, err := d.dial(ctx)
		if err == nil {
			mu.Lock()
			opened++
			if open := d.openConns(); open > allowed {
				t.Errorf("%d open at a dial, %d allowed", open, allowed)
			}
			mu.Unlock()
		}
		return c, err
	}
	p, err := New(Config[*fakeConn]{Dial: dial, Close: d.close, MaxConns: 8, BargeWindow: time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			for i := 0; i < 2000 && ctx.Err() == nil; i++ {
				l, err := p.Acquire(ctx)
				if err != nil {
					if ctx.Err() == nil {
						t.Errorf("Acquire: %v", err)
					}
					return
				}
				if l.Value().inUse.Add(1) != 1 {
					t.Errorf("connection %d shared", l.Value().id)
				}
				time.Sleep(10 * time.Microsecond)
				l.Value().inUse.Add(-1)
				l.Release()
			}
		})
	}
	for _, n := range []int{2, 6, 1, 8, 3, 8} {
		mu.Lock()
		allowed = max(allowed, n)
		mu.Unlock()
		if err := p.SetMaxConns(n); err != nil {
			t.Fatal(err)
		}
		WaitFor(t, "the pool within its new limit", func() bool { return p.Stats().TotalConns <= n })
		mu.Lock()
		allowed = n
		mu.Unlock()
	}
	wg.Wait()
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d.openConns() != 0 {
		t.Fatalf("%d open after Close", d.openConns())
	}
}
