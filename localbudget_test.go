package shoal

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal/internal/fairshare"
	"github.com/shoalpool/shoal/internal/permitmove"
)

// holders keeps n callers of p holding a lease each (or waiting for one)
// until stop; stop releases them all and waits for them.
type holders struct {
	quit chan struct{}
	wg   sync.WaitGroup
	got  atomic.Int32
}

func hold(p *Pool[*fakeConn], n int) *holders {
	h := &holders{quit: make(chan struct{})}
	for range n {
		h.wg.Go(func() {
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			go func() {
				<-h.quit
				cancel()
			}()
			l, err := p.Acquire(ctx)
			if err != nil {
				return
			}
			h.got.Add(1)
			<-h.quit
			l.Release()
		})
	}
	return h
}

func (h *holders) stop() {
	close(h.quit)
	h.wg.Wait()
}

// sharesOf lists each member's "name share/held" for failure messages and
// comparisons.
func sharesOf(b *LocalBudget) string {
	var parts []string
	for _, m := range b.Stats().Members {
		parts = append(parts, fmt.Sprintf("%s %d/%d", m.Name, m.Share, m.Held))
	}
	return strings.Join(parts, ", ")
}

// peersUnderBudget makes a budget of size and two pools in it, "a" and "c",
// each of MaxConns size.
func peersUnderBudget(t testing.TB, size int, opts ...BudgetOption) (b *LocalBudget, a, c *Pool[*fakeConn]) {
	t.Helper()
	b = mustBudget(t, size, opts...)
	a, _ = newTestPool(t, Config[*fakeConn]{Name: "a", MaxConns: size, Budget: b})
	c, _ = newTestPool(t, Config[*fakeConn]{Name: "c", MaxConns: size, Budget: b})
	return b, a, c
}

func mustBudget(t testing.TB, size int, opts ...BudgetOption) *LocalBudget {
	t.Helper()
	b, err := NewBudget(size, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// Shares follow demand, max-min: the small pool gets all it asks, the two
// hungry ones split the rest; each holds its share, and no more than Size
// connections are ever open.
func TestLocalBudgetSharesAreMaxMinFair(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustBudget(t, 12, BudgetIdleTime(time.Second))
		var open, most atomic.Int32
		pool := func(name string) *Pool[*fakeConn] {
			d := &fakeDialer{}
			p, _ := newTestPool(t, Config[*fakeConn]{Name: name, MaxConns: 12, Budget: b,
				Dial: func(ctx context.Context) (*fakeConn, error) {
					n := open.Add(1)
					for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
					}
					return d.dial(ctx)
				},
				Close: func(c *fakeConn) error { open.Add(-1); return d.close(c) },
			})
			return p
		}
		a, bb, c := pool("a"), pool("b"), pool("c")
		if got := sharesOf(b); got != "a 4/0, b 4/0, c 4/0" {
			t.Fatalf("shares of idle pools: %s, want an even split", got)
		}
		ha, hb, hc := hold(a, 2), hold(bb, 10), hold(c, 10)
		time.Sleep(200 * time.Millisecond)
		synctest.Wait()
		if got := sharesOf(b); got != "a 2/2, b 5/5, c 5/5" {
			t.Fatalf("shares/held: %s, want a 2/2, b 5/5, c 5/5", got)
		}
		for _, p := range []*Pool[*fakeConn]{a, bb, c} {
			if s := p.Stats(); s.Share != s.TotalConns || s.BudgetMembers != 3 {
				t.Fatalf("pool stats: %+v", s)
			}
		}
		ha.stop()
		hb.stop()
		hc.stop()
		if m := most.Load(); m > 12 {
			t.Fatalf("%d connections open at once under a budget of 12", m)
		}
	})
}

// A pool's demand counts as the highest of the last IdleTime, so a share
// follows a fall only once demand has stayed low that long; even then a
// pool keeps the connections it holds while nobody else asks for them,
// and gives them up at once to a pool that does.
func TestLocalBudgetHysteresis(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, a, c := peersUnderBudget(t, 10, BudgetIdleTime(time.Second))
		demandOfA := func() int { return b.Stats().Members[0].Demand }
		ha1, ha2, hc := hold(a, 2), hold(a, 4), hold(c, 4)
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if got := sharesOf(b); got != "a 6/6, c 4/4" {
			t.Fatalf("demands 6 and 4: %s", got)
		}
		ha2.stop() // a's demand falls to 2; nobody waits
		time.Sleep(900 * time.Millisecond)
		synctest.Wait()
		if got, d := sharesOf(b), demandOfA(); got != "a 6/6, c 4/4" || d != 6 {
			t.Fatalf("within IdleTime of a's fall: %s, a's demand %d; want the shares kept and a's demand 6", got, d)
		}
		time.Sleep(200 * time.Millisecond)
		synctest.Wait()
		// Demands 2 and 4: a keeps the four idle connections it holds,
		// which nobody asks for.
		if got, d := sharesOf(b), demandOfA(); got != "a 6/6, c 4/4" || d != 2 {
			t.Fatalf("past IdleTime: %s, a's demand %d; want a 6/6, c 4/4 and a's demand 2", got, d)
		}
		// c now wants 7: by the demands of the moment (2 and 7, the one
		// left over to a, which holds more), a's idle connections close
		// for c's, in a division c's waiting asks for rather than at the
		// next sample (the last was just now).
		hc2 := hold(c, 3)
		time.Sleep(localKickGap)
		synctest.Wait()
		if got := sharesOf(b); got != "a 3/3, c 7/7" || hc2.got.Load() != 3 {
			t.Fatalf("c waiting %s: %s, %d of 3 served; want a 3/3, c 7/7 before the next sample", localKickGap, got, hc2.got.Load())
		}
		for _, h := range []*holders{ha1, hc, hc2} {
			h.stop()
		}
	})
}

// BudgetIdleTime follows the convention of every setting, and
// shoaletcd's IdleTime: unset or 0 is the default wait of 2s (written out,
// not the code's constant) before a fall in demand counts, and a negative
// value is no wait at all.
func TestLocalBudgetIdleTimeZeroAndNegative(t *testing.T) {
	for _, tc := range []struct {
		opts []BudgetOption
		wait time.Duration // how long a's fall takes to count
	}{
		{nil, 2 * time.Second},
		{[]BudgetOption{BudgetIdleTime(0)}, 2 * time.Second},
		{[]BudgetOption{BudgetIdleTime(-1)}, 0},
	} {
		synctest.Test(t, func(t *testing.T) {
			b := mustBudget(t, 10, tc.opts...)
			a, _ := newTestPool(t, Config[*fakeConn]{Name: "a", MaxConns: 10, Budget: b})
			demandOfA := func() int { return b.Stats().Members[0].Demand }
			h1, h2 := hold(a, 2), hold(a, 4)
			time.Sleep(100 * time.Millisecond)
			synctest.Wait()
			if d := demandOfA(); d != 6 {
				t.Fatalf("%d options, IdleTime %v: a's demand %d while it holds 6", len(tc.opts), tc.wait, d)
			}
			h2.stop()
			if tc.wait > 0 {
				time.Sleep(tc.wait - 100*time.Millisecond)
				synctest.Wait()
				if d := demandOfA(); d != 6 {
					t.Fatalf("%d options: a's demand %d %v after its fall, want 6 until %v", len(tc.opts), d, tc.wait-100*time.Millisecond, tc.wait)
				}
			}
			time.Sleep(200 * time.Millisecond)
			synctest.Wait()
			if d := demandOfA(); d != 2 {
				t.Fatalf("%d options, IdleTime %v: a's demand %d %v after its fall, want 2", len(tc.opts), tc.wait, d, tc.wait+100*time.Millisecond)
			}
			h1.stop()
		})
	}
}

// A pool at its share whose peer holds idle connections gets them at once:
// the peer's share shrinks below the idle connections it keeps for its
// recent demand, and it closes them.
func TestLocalBudgetIdleConnectionsMoveToWhoNeedsThem(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, a, c := peersUnderBudget(t, 4, BudgetIdleTime(time.Minute))
		ha := hold(a, 4)
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		ha.stop()
		if s := a.Stats(); s.IdleConns != 4 {
			t.Fatalf("a: %+v, want 4 idle", s)
		}
		hc := hold(c, 2)
		time.Sleep(60 * time.Millisecond)
		synctest.Wait()
		if got := hc.got.Load(); got != 2 {
			t.Fatalf("c got %d of 2 connections while a kept 4 idle (%s)", got, sharesOf(b))
		}
		if got := sharesOf(b); got != "a 2/2, c 2/2" {
			t.Fatalf("shares/held: %s", got)
		}
		hc.stop()
	})
}

// A pool's acquire ends with its context even when the budget has nothing
// for it.
func TestLocalBudgetAcquireEndsWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustBudget(t, 1)
		a, _ := newTestPool(t, Config[*fakeConn]{Name: "a", MaxConns: 1, MinConns: 1, Budget: b})
		c, _ := newTestPool(t, Config[*fakeConn]{Name: "c", MaxConns: 1, Budget: b})
		ha := hold(a, 1)
		synctest.Wait()
		start := time.Now()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := c.Acquire(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire: %v, want the deadline's error", err)
		}
		if waited := time.Since(start); waited != time.Second {
			t.Fatalf("Acquire returned after %v, want its 1s deadline", waited)
		}
		if got := sharesOf(b); got != "a 1/1, c 0/0" {
			t.Fatalf("a's minimum is the whole budget: %s", got)
		}
		ha.stop()
	})
}

// Closing a pool while it holds permits, and while its dial waits for
// one, deadlocks nothing: Close returns once the leases are released, and
// the permits pass to the other pool.
func TestLocalBudgetCloseWithPermitsOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustBudget(t, 2)
		d := &fakeDialer{}
		a, err := New(Config[*fakeConn]{Name: "a", MaxConns: 2, Budget: b, Dial: d.dial, Close: d.close})
		if err != nil {
			t.Fatal(err)
		}
		c, err := New(Config[*fakeConn]{Name: "c", MaxConns: 2, Budget: b, Dial: d.dial, Close: d.close})
		if err != nil {
			t.Fatal(err)
		}
		ha := hold(a, 2)
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		// Once c has waited the budget's grace (a has no idle connection
		// to give), c's share is 1, but both permits are a's: c's dial
		// waits in the budget until a gives one back.
		hc := hold(c, 1)
		time.Sleep(fairshare.Grace(b.idle, localSampleEvery) + 100*time.Millisecond)
		synctest.Wait()
		if s := c.Stats(); s.Dialing != 1 || s.Share != 1 {
			t.Fatalf("c: %+v, want a dial waiting for its permit", s)
		}
		// Close c with its dial waiting for a permit, and a with both
		// leases out.
		closedC := make(chan error, 1)
		go func() { closedC <- c.Close(context.Background()) }()
		synctest.Wait()
		select {
		case err := <-closedC:
			if err != nil {
				t.Fatalf("closing c: %v", err)
			}
		default:
			t.Fatal("c's Close waits for a dial that waits for a permit")
		}
		hc.stop()
		closedA := make(chan error, 1)
		go func() { closedA <- a.Close(context.Background()) }()
		synctest.Wait()
		select {
		case <-closedA:
			t.Fatal("a closed with two leases out")
		default:
		}
		ha.stop()
		if err := <-closedA; err != nil {
			t.Fatalf("closing a: %v", err)
		}
		if s := b.Stats(); s.InUse != 0 || len(s.Members) != 0 {
			t.Fatalf("after both closed: %+v", s)
		}
		if n := d.openConns(); n != 0 {
			t.Fatalf("%d connections left open", n)
		}
	})
}

// Many pools, many goroutines, real time under -race: the connections open
// never exceed Size, and no slot is out twice.
func TestLocalBudgetNeverAboveSize(t *testing.T) {
	const size, pools, workers, rounds = 10, 8, 6, 150
	b := mustBudget(t, size, BudgetIdleTime(20*time.Millisecond))
	var mu sync.Mutex
	slots := map[int]bool{}
	slotOf := map[*fakeConn]int{}
	open, most := 0, 0
	d := &fakeDialer{}
	dial := func(ctx context.Context) (*fakeConn, error) {
		p := PermitFromContext(ctx)
		c, err := d.dial(ctx)
		if err != nil {
			return nil, err
		}
		mu.Lock()
		defer mu.Unlock()
		if slots[p.Slot()] {
			t.Errorf("slot %d out twice", p.Slot())
		}
		slots[p.Slot()] = true
		slotOf[c] = p.Slot()
		open++
		most = max(most, open)
		return c, nil
	}
	closeConn := func(c *fakeConn) error {
		mu.Lock()
		delete(slots, slotOf[c])
		open--
		mu.Unlock()
		return d.close(c)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var all sync.WaitGroup
	for i := range pools {
		p, err := New(Config[*fakeConn]{Name: fmt.Sprint("p", i), MaxConns: 6, MinConns: i % 2, Budget: b, Dial: dial, Close: closeConn})
		if err != nil {
			t.Fatal(err)
		}
		all.Go(func() {
			var wg sync.WaitGroup
			for w := range workers {
				wg.Go(func() {
					for r := range rounds {
						l, err := p.Acquire(ctx)
						if err != nil {
							t.Errorf("Acquire: %v", err)
							return
						}
						if s := b.Stats(); s.InUse > size {
							t.Errorf("%d permits out of %d", s.InUse, size)
						}
						if (r+w)%7 == 0 {
							time.Sleep(100 * time.Microsecond)
							l.Discard()
						} else {
							l.Release()
						}
					}
				})
			}
			wg.Wait()
			if err := p.Close(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	all.Wait()
	if most > size {
		t.Fatalf("%d connections open at once under a budget of %d", most, size)
	}
	if s := b.Stats(); s.InUse != 0 || len(s.Members) != 0 || b.Members() != 0 {
		t.Fatalf("after every pool closed: %+v", s)
	}
	t.Logf("most open at once: %d of %d; dials: %d", most, size, d.dials.Load())
}

// A budget made without BudgetName is named "budget" (settings.md), in
// Name and Stats.
func TestLocalBudgetNameDefault(t *testing.T) {
	b := mustBudget(t, 2)
	if b.Name() != "budget" || b.Stats().Name != "budget" {
		t.Errorf("a budget without BudgetName: Name %q, Stats().Name %q, want \"budget\"", b.Name(), b.Stats().Name)
	}
}

func TestLocalBudgetRefusesBadInput(t *testing.T) {
	for _, size := range []int{0, -1} {
		if _, err := NewBudget(size); err == nil || !strings.Contains(err.Error(), fmt.Sprintf("NewBudget(%d)", size)) {
			t.Errorf("NewBudget(%d): %v", size, err)
		}
	}
	if _, err := NewBudget(1, BudgetName("")); err == nil || !strings.Contains(err.Error(), "BudgetName") {
		t.Errorf("an empty name: %v", err)
	}
	synctest.Test(t, func(t *testing.T) {
		b := mustBudget(t, 3, BudgetName("tenants"))
		newTestPool(t, Config[*fakeConn]{Name: "a", MaxConns: 3, MinConns: 2, Budget: b})
		d := &fakeDialer{}
		_, err := New(Config[*fakeConn]{Name: "c", MaxConns: 3, MinConns: 2, Budget: b, Dial: d.dial})
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != "Budget" || !strings.Contains(err.Error(), "sum to 4") || !strings.Contains(err.Error(), `"tenants"`) {
			t.Fatalf("New over the minimums: %v", err)
		}
		if b.Members() != 1 {
			t.Fatalf("the refused pool counts as a member: %d", b.Members())
		}
		if _, err := b.Acquire(context.Background()); !errors.Is(err, errNotMember) || !strings.HasPrefix(err.Error(), `shoal: budget "tenants": `) {
			t.Fatalf("Acquire outside a pool: %v; want errNotMember, naming the budget", err)
		}
		// A pool that joins twice, or none at all: the error names the
		// budget, as its other errors do.
		m := &countMember{}
		leave, err := b.Join(m)
		if err != nil {
			t.Fatal(err)
		}
		defer leave()
		for what, member := range map[string]BudgetMember{"a second Join": m, "a nil member": nil} {
			if _, err := b.Join(member); err == nil || !strings.HasPrefix(err.Error(), `shoal: budget "tenants": Join: `) {
				t.Errorf("%s: %v; want an error naming the budget", what, err)
			}
		}
	})
}

// countMember is a BudgetMember of a test's own: a demand it is told, and
// the shares it is given.
type countMember struct {
	demand atomic.Int32
	share  atomic.Int32
}

func (m *countMember) Demand() int    { return int(m.demand.Load()) }
func (m *countMember) SetShare(n int) { m.share.Store(int32(n)) }

// AcquireFor serves a member that is not a pool: up to its share, then it
// waits, until a permit comes back or its context ends; a second release
// of a permit does nothing.
func TestLocalBudgetAcquireFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustBudget(t, 3)
		m, other := &countMember{}, &countMember{}
		leave, err := b.Join(m)
		if err != nil {
			t.Fatal(err)
		}
		defer leave()
		if _, err := b.Join(m); err == nil {
			t.Fatal("a member joined twice")
		}
		leaveOther, err := b.Join(other)
		if err != nil {
			t.Fatal(err)
		}
		// Both demands while the sampler sleeps: set between its looks,
		// one would be seen before the other, and the share it gave would
		// shrink only after the budget's idle time.
		synctest.Wait()
		other.demand.Store(3)
		m.demand.Store(3)
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		if m.share.Load() != 2 || other.share.Load() != 1 {
			t.Fatalf("shares %d and %d, want 2 and 1 (the remainder to the older member)", m.share.Load(), other.share.Load())
		}
		ctx := context.Background()
		p1, err := b.AcquireFor(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		p2, err := b.AcquireFor(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		if p1.Slot() == p2.Slot() {
			t.Fatalf("two permits on slot %d", p1.Slot())
		}
		short, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		if _, err := b.AcquireFor(short, m); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("a third permit beyond the share of 2: %v", err)
		}
		leaveOther() // m's share grows to 3
		time.Sleep(100 * time.Millisecond)
		p3, err := b.AcquireFor(ctx, m)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range []BudgetPermit{p1, p2, p3, p3} {
			p.Release()
		}
		if s := b.Stats(); s.InUse != 0 || s.Members[0].Held != 0 {
			t.Fatalf("after releasing: %+v", s)
		}
		if _, err := b.AcquireFor(ctx, other); !errors.Is(err, errNotMember) {
			t.Fatalf("AcquireFor a member that left: %v", err)
		}
	})
}

// memberBesidePool returns a budget of 4 (IdleTime 1s) with a member of
// the test's own joined to it, and a pool of up to 4 beside it.
func memberBesidePool(t *testing.T) (*LocalBudget, *countMember, *Pool[*fakeConn]) {
	t.Helper()
	b := mustBudget(t, 4, BudgetIdleTime(time.Second))
	m := &countMember{}
	leave, err := b.Join(m)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(leave)
	a, _ := newTestPool(t, Config[*fakeConn]{Name: "a", MaxConns: 4, Budget: b})
	return b, m, a
}

// A member that asks for a permit while a peer keeps idle connections
// holding every one gets a permit within milliseconds, not at the next
// sample: its wait asks for a division, and the peer closes one.
func TestLocalBudgetWaitingMemberAsksForADivision(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, m, a := memberBesidePool(t)
		ha := hold(a, 4)
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		ha.stop()
		time.Sleep(2 * time.Second) // past IdleTime: a's demand is 0
		synctest.Wait()
		if s := a.Stats(); s.IdleConns != 4 {
			t.Fatalf("a: %+v, want its 4 connections kept idle while nobody asks", s)
		}
		m.demand.Store(1)
		start := time.Now()
		p, err := b.AcquireFor(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited > localKickGap {
			t.Fatalf("waited %s for a permit held idle by a peer, want at most %s", waited, localKickGap)
		}
		p.Release()
	})
}

// Under contention (the demands take every connection) a wait does not
// hurry the division: the shares move at the regular samples, toward need
// and as sparingly as ever, so that pools of many tenants do not trade
// connections at every ask.
func TestLocalBudgetAsksWaitUnderContention(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, m, a := memberBesidePool(t)
		ha1, ha2 := hold(a, 2), hold(a, 2)
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		ha2.stop() // a holds 4, uses 2, and its demand counts as 4 for IdleTime
		time.Sleep(localSampleEvery)
		synctest.Wait() // a division has seen a's two idle connections
		m.demand.Store(2)
		start := time.Now()
		p, err := b.AcquireFor(context.Background(), m)
		if err != nil {
			t.Fatal(err)
		}
		if waited := time.Since(start); waited <= localKickGap || waited > localSampleEvery {
			t.Fatalf("served after %s, want at the next regular sample (within %s, not within %s)", waited, localSampleEvery, localKickGap)
		}
		p.Release()
		ha1.stop()
	})
}

// A permit moved to another member counts as that member's from then on:
// the member it left may take another at once, and its release gives it
// back as the new member's. A released permit, or a member not joined,
// is refused.
func TestLocalBudgetMovePermit(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustBudget(t, 2)
		from, to := &countMember{}, &countMember{}
		from.demand.Store(1)
		to.demand.Store(1)
		for _, m := range []*countMember{from, to} {
			leave, err := b.Join(m)
			if err != nil {
				t.Fatal(err)
			}
			defer leave()
		}
		ctx := context.Background()
		p, err := b.AcquireFor(ctx, from)
		if err != nil {
			t.Fatal(err)
		}
		if err := permitmove.Move(p, to); err != nil {
			t.Fatal(err)
		}
		held := func() (f, g int) {
			for _, m := range b.Stats().Members {
				switch m.Name {
				case "pool-1":
					f = m.Held
				case "pool-2":
					g = m.Held
				}
			}
			return f, g
		}
		if f, tt := held(); f != 0 || tt != 1 {
			t.Fatalf("held %d and %d after the move, want 0 and 1", f, tt)
		}
		short, cancel := context.WithTimeout(ctx, time.Second)
		defer cancel()
		p2, err := b.AcquireFor(short, from) // its share of 1 is free again
		if err != nil {
			t.Fatalf("the member a permit left: %v", err)
		}
		p.Release()
		if f, tt := held(); f != 1 || tt != 0 {
			t.Fatalf("held %d and %d after the moved permit's release, want 1 and 0", f, tt)
		}
		if err := permitmove.Move(p, from); err == nil {
			t.Fatal("moved a released permit")
		}
		if err := permitmove.Move(p2, &countMember{}); err == nil {
			t.Fatal("moved a permit to a member not joined")
		}
		p2.Release()
	})
}

// More pools want connections than the budget has: the connections that
// do not divide go round, so every pool is served, none waits for ever.
func TestLocalBudgetRemainderGoesRound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustBudget(t, 2, BudgetIdleTime(time.Second))
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		served := make([]atomic.Int32, 5)
		for i := range served {
			p, _ := newTestPool(t, Config[*fakeConn]{Name: fmt.Sprint("p", i), MaxConns: 2, Budget: b})
			for range 2 {
				wg.Go(func() {
					for ctx.Err() == nil {
						l, err := p.Acquire(ctx)
						if err != nil {
							return
						}
						served[i].Add(1)
						time.Sleep(10 * time.Millisecond)
						l.Release()
					}
				})
			}
		}
		time.Sleep(8 * time.Second)
		cancel()
		wg.Wait()
		for i := range served {
			if served[i].Load() == 0 {
				t.Errorf("pool p%d never served in 8s while the others were (%s)", i, sharesOf(b))
			}
		}
	})
}

// A ctx made by ContextWithBudgetMember names its member to Acquire, as a
// pool's own does; one naming nobody is refused.
func TestContextWithBudgetMember(t *testing.T) {
	b := mustBudget(t, 2)
	m := &countMember{}
	leave, err := b.Join(m)
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	ctx := context.Background()
	if _, err := b.Acquire(ctx); !errors.Is(err, errNotMember) {
		t.Fatalf("Acquire naming nobody: %v", err)
	}
	if got := BudgetMemberFromContext(ContextWithBudgetMember(ctx, m)); got != m {
		t.Fatalf("BudgetMemberFromContext = %v, want the member put in", got)
	}
	p, err := b.Acquire(ContextWithBudgetMember(ctx, m))
	if err != nil {
		t.Fatal(err)
	}
	if s := b.Stats(); s.InUse != 1 || s.Members[0].Held != 1 {
		t.Fatalf("after Acquire for the member: %+v", s)
	}
	p.Release()
}

// The budget's Stats show each pool's minimum, its MinConns.
func TestLocalBudgetStatsShowEachPoolsMinimum(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustBudget(t, 4)
		newTestPool(t, Config[*fakeConn]{Name: "a", MaxConns: 2, MinConns: 1, Budget: b})
		if m := b.Stats().Members[0].Min; m != 1 {
			t.Fatalf("Min %d, want MinConns 1", m)
		}
	})
}
