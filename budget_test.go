package shoal

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// testBudget is a Budget of a fixed number of slots shared by the pools that
// join it, as an in-process stand-in for shoaletcd (whose own tests run it
// against etcd). It checks the pool's side of the contract: every permit is
// released exactly once, and no slot is out twice.
type testBudget struct {
	mu      sync.Mutex
	free    []int
	out     map[int]bool
	members []BudgetMember
	left    int
	changed chan struct{} // closed and replaced when a slot comes back
	err     error         // when set, Acquire fails with it
	t       *testing.T
}

func newTestBudget(t *testing.T, size int) *testBudget {
	b := &testBudget{out: map[int]bool{}, changed: make(chan struct{}), t: t}
	for i := size - 1; i >= 0; i-- {
		b.free = append(b.free, i)
	}
	return b
}

func (b *testBudget) Join(m BudgetMember) (func(), error) {
	b.mu.Lock()
	b.members = append(b.members, m)
	b.mu.Unlock()
	var once atomic.Bool
	return func() {
		if once.Swap(true) {
			b.t.Error("leave called twice")
		}
		b.mu.Lock()
		b.left++
		b.mu.Unlock()
	}, nil
}

func (b *testBudget) Members() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.members) - b.left
}

func (b *testBudget) Acquire(ctx context.Context) (BudgetPermit, error) {
	for {
		b.mu.Lock()
		if b.err != nil {
			err := b.err
			b.mu.Unlock()
			return nil, err
		}
		if n := len(b.free); n > 0 {
			slot := b.free[n-1]
			b.free = b.free[:n-1]
			b.out[slot] = true
			b.mu.Unlock()
			return &testPermit{b: b, slot: slot}, nil
		}
		changed := b.changed
		b.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
}

func (b *testBudget) outstanding() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.out)
}

type testPermit struct {
	b        *testBudget
	slot     int
	released atomic.Bool
}

func (p *testPermit) Slot() int { return p.slot }

func (p *testPermit) Release() {
	if p.released.Swap(true) {
		p.b.t.Errorf("permit %d released twice", p.slot)
		return
	}
	b := p.b
	b.mu.Lock()
	delete(b.out, p.slot)
	b.free = append(b.free, p.slot)
	close(b.changed)
	b.changed = make(chan struct{})
	b.mu.Unlock()
}

func TestBudgetBoundsConnectionsAcrossPools(t *testing.T) {
	b := newTestBudget(t, 3)
	var open, most atomic.Int32
	d := &fakeDialer{}
	dial := func(ctx context.Context) (*fakeConn, error) {
		if PermitFromContext(ctx) == nil {
			t.Error("a dial without its permit in the context")
		}
		n := open.Add(1)
		for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
		}
		return d.dial(ctx)
	}
	closeConn := func(c *fakeConn) error { open.Add(-1); return d.close(c) }
	cfg := Config[*fakeConn]{Dial: dial, Close: closeConn, MaxConns: 3, Budget: b}
	p1, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	p2, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	if s := p1.Stats(); s.BudgetMembers != 2 {
		t.Fatalf("BudgetMembers = %d, want 2", s.BudgetMembers)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// testBudget has no shares (shoaletcd moves idle connections' permits
	// by share): a pool that is done closes, so its permits pass on.
	var all sync.WaitGroup
	for _, p := range []*Pool[*fakeConn]{p1, p2} {
		var wg sync.WaitGroup
		for range 4 {
			wg.Go(func() {
				for range 200 {
					l, err := p.Acquire(ctx)
					if err != nil {
						t.Errorf("Acquire: %v", err)
						return
					}
					time.Sleep(20 * time.Microsecond)
					// Discard some, so that permits come back and move
					// between the pools.
					if l.Value().id%3 == 0 {
						l.Discard()
					} else {
						l.Release()
					}
				}
			})
		}
		all.Go(func() {
			wg.Wait()
			if err := p.Close(context.Background()); err != nil {
				t.Error(err)
			}
		})
	}
	all.Wait()
	if m := most.Load(); m > 3 {
		t.Fatalf("%d connections open at once under a budget of 3", m)
	}
	if n := b.outstanding(); n != 0 {
		t.Fatalf("%d permits still out after both pools closed", n)
	}
	if b.left != 2 {
		t.Fatalf("leave called %d times, want 2", b.left)
	}
}

func TestBudgetShareLimitsThePoolAndGrowingServesWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newTestBudget(t, 10)
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 4, Budget: b})
		member := b.members[0]
		member.SetShare(1)
		held := mustAcquire(t, p)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		w1, w2 := acquireAsync(ctx, p), acquireAsync(ctx, p)
		wantWaiters(t, p, 2)
		if got := member.Demand(); got != 3 {
			t.Fatalf("Demand = %d with 1 in use and 2 waiting, want 3", got)
		}
		s := p.Stats()
		if s.Share != 1 || s.MaxConns != 4 || s.Demand != 3 || s.TotalConns != 1 {
			t.Fatalf("Stats at share 1: %+v", s)
		}

		member.SetShare(3)
		l1, l2 := <-w1, <-w2
		if l1.rec == nil || l2.rec == nil {
			t.Fatal("a waiter failed after the share grew")
		}
		// The share never lifts the pool above its own MaxConns.
		member.SetShare(100)
		if s := p.Stats(); s.Share != 100 {
			t.Fatalf("Share = %d, want 100 as the budget set it", s.Share)
		}
		if got := member.Demand(); got != 3 {
			t.Fatalf("Demand = %d, want 3", got)
		}

		// Shrinking to 0: a budget with nothing for this pool. The leases
		// close as they come back, and an acquire waits (never fails) until
		// the share returns.
		member.SetShare(0)
		held.Release()
		l1.Release()
		l2.Release()
		synctest.Wait()
		if open := d.openConns(); open != 0 {
			t.Fatalf("%d open at share 0", open)
		}
		w3 := acquireAsync(ctx, p)
		wantWaiters(t, p, 1)
		member.SetShare(1)
		l3 := <-w3
		if l3.rec == nil {
			t.Fatal("the waiter failed after the share came back")
		}
		l3.Release()
	})
}

func TestBudgetPermitsHaveDistinctSlotsAndComeBackOnClose(t *testing.T) {
	b := newTestBudget(t, 4)
	var mu sync.Mutex
	slots := map[int]bool{}
	d := &fakeDialer{}
	dial := func(ctx context.Context) (*fakeConn, error) {
		slot := PermitFromContext(ctx).Slot()
		mu.Lock()
		if slots[slot] {
			t.Errorf("slot %d handed to two open connections", slot)
		}
		slots[slot] = true
		mu.Unlock()
		return d.dial(ctx)
	}
	p, _ := newTestPool(t, Config[*fakeConn]{Dial: dial, MaxConns: 4, MinConns: 4, Budget: b})
	if err := p.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := b.outstanding(); n != 4 {
		t.Fatalf("%d permits out for 4 connections", n)
	}
	if PermitFromContext(context.Background()) != nil {
		t.Fatal("a permit in a context that has none")
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if n := b.outstanding(); n != 0 {
		t.Fatalf("%d permits out after Close", n)
	}
}

func TestBudgetFailedDialGivesItsPermitBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newTestBudget(t, 1)
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 1, Budget: b})
		d.mu.Lock()
		d.err = errBoom
		d.mu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		defer cancel()
		if _, err := p.Acquire(ctx); !errors.Is(err, errBoom) {
			t.Fatalf("Acquire with a failing dial: %v", err)
		}
		if n := b.outstanding(); n != 0 {
			t.Fatalf("%d permits out after a failed dial", n)
		}
	})
}

func TestBudgetAcquireErrorFailsTheDialWithItsCause(t *testing.T) {
	b := newTestBudget(t, 1)
	errNoBudget := errors.New("the budget is gone")
	b.err = errNoBudget
	p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 1, Budget: b})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := p.Acquire(ctx)
	if !errors.Is(err, errNoBudget) || !errors.Is(err, ErrDial) || !strings.Contains(err.Error(), "budget: the budget is gone") {
		t.Fatalf("Acquire when the budget fails: %v", err)
	}
	if d.dials.Load() != 0 {
		t.Fatal("the pool dialled without a permit")
	}
}

func TestCloseEndsADialWaitingForAPermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := newTestBudget(t, 1)
		other, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, Budget: b})
		hog := mustAcquire(t, other) // the budget's one permit
		defer hog.Release()
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 1, Budget: b})
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		defer cancel()
		if _, err := p.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire with no permit to be had: %v", err)
		}
		if s := p.Stats(); s.Dialing != 1 {
			t.Fatalf("want the dial still waiting for its permit: %+v", s)
		}
		closeCtx, cancelClose := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancelClose()
		if err := p.Close(closeCtx); err != nil {
			t.Fatalf("Close with a dial waiting for a permit: %v", err)
		}
		if d.dials.Load() != 0 {
			t.Fatal("a dial ran without a permit")
		}
	})
}

// countlessBudget is a Budget that cannot count its members.
type countlessBudget struct{ *testBudget }

func (countlessBudget) Members() {} // not the Members() int that Stats looks for

func TestBudgetMembersIsAtLeastThisPool(t *testing.T) {
	b := countlessBudget{newTestBudget(t, 2)}
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 2, Budget: b})
	if s := p.Stats(); s.BudgetMembers != 1 {
		t.Fatalf("BudgetMembers = %d with a budget that cannot count, want 1", s.BudgetMembers)
	}
	plain, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 2})
	if s := plain.Stats(); s.BudgetMembers != 0 || s.Share != 2 {
		t.Fatalf("without a budget: BudgetMembers %d, Share %d; want 0 and MaxConns", s.BudgetMembers, s.Share)
	}
}

// revocableTestPermit is a testPermit its budget can take back.
type revocableTestPermit struct {
	*testPermit
	revoke func()
}

func (p *revocableTestPermit) OnRevoke(f func()) { p.revoke = f }

type revocableBudget struct {
	*testBudget
	mu      sync.Mutex
	permits []*revocableTestPermit
}

func (b *revocableBudget) Acquire(ctx context.Context) (BudgetPermit, error) {
	p, err := b.testBudget.Acquire(ctx)
	if err != nil {
		return nil, err
	}
	rp := &revocableTestPermit{testPermit: p.(*testPermit)}
	b.mu.Lock()
	b.permits = append(b.permits, rp)
	b.mu.Unlock()
	return rp, nil
}

// TestBudgetRevokeClosesThatConnection: a revoked permit's connection, and
// no other, closes: at once when idle, on its release when held.
func TestBudgetRevokeClosesThatConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &revocableBudget{testBudget: newTestBudget(t, 3)}
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 3, Budget: b})
		var held []Lease[*fakeConn]
		for range 3 {
			held = append(held, mustAcquire(t, p))
		}
		held[2].Release() // one idle
		for _, rp := range b.permits {
			if rp.revoke == nil {
				t.Fatal("the pool did not register for revocation")
			}
		}
		// Revoke every permit: the idle connection closes now, the two held
		// ones when released.
		for _, rp := range b.permits {
			rp.revoke()
		}
		synctest.Wait()
		if s := p.Stats(); s.TotalConns != 2 || s.IdleConns != 0 {
			t.Fatalf("after revoking: %+v, want the idle one closed at once", s)
		}
		held[0].Release()
		held[1].Release()
		synctest.Wait()
		if s := p.Stats(); s.TotalConns != 0 {
			t.Fatalf("revoked connections kept after release: %+v", s)
		}
		if n := b.outstanding(); n != 0 {
			t.Fatalf("%d permits out after the revoked connections closed", n)
		}
	})
}

// Hijack gives the connection's permit back with its place in MaxConns:
// the pool forgets the connection and never closes it, so a permit kept
// would stay out for good, and under a budget of one no connection could
// open again, in this pool or any other.
func TestBudgetHijackGivesItsPermitBack(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, streams := range []int{1, 2} {
			b := newTestBudget(t, 1)
			p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, MaxStreams: streams, Budget: b})
			l := mustAcquire(t, p)
			c, err := l.Hijack()
			if err != nil {
				t.Fatal(err)
			}
			if n := b.outstanding(); n != 0 {
				t.Fatalf("streams %d: %d permit(s) out after Hijack", streams, n)
			}
			l = mustAcquire(t, p) // a new connection, on the permit given back
			if l.Value() == c {
				t.Fatalf("streams %d: the hijacked connection handed out again", streams)
			}
			l.Release()
		}
	})
}
