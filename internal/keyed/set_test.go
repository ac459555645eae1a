package keyed

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// Sentinels standing in for a Group's package's.
var (
	errClosed    = errors.New("closed")
	errExhausted = errors.New("exhausted")
	errPanicked  = errors.New("panicked")
)

// fakePool is the pool type of these tests: the set only makes, closes
// and asks about its pools, so a counter of leases is all one needs.
type fakePool struct {
	key    string
	n      int             // the nth the set made
	leases atomic.Int32    // as a real pool's Stats would count them
	closes atomic.Int32    // how many times the set closed it: 1 at most before the set's Close
	err    error           // what its Close returns
	ctx    context.Context // the ctx Make was given
	// slow, when not nil, holds each of its Closes until it is closed
	// or the Close's ctx ends, as a pool with a connection still leased.
	slow chan struct{}
}

// closed reports whether the set closed p.
func (p *fakePool) closed() bool { return p.closes.Load() > 0 }

// harness is a set of fakePools with what it made, and a Make the test
// can hold up or fail.
type harness struct {
	set   *Set[string, *fakePool]
	made  map[string][]*fakePool // by key, in order
	hold  chan struct{}          // Make waits on it when not nil
	fail  error                  // Make returns it when not nil
	makes atomic.Int32
	// looked, when not nil, runs in Idle after it has read the pool's
	// leases and before it answers: what a caller may do while a sweep
	// looks at a pool outside the set's lock. Set only while no other
	// goroutine sweeps (the reaper's first look is IdleTimeout/4 away).
	looked func(p *fakePool)
}

// newHarness returns a harness whose set has idle and maxPools; the test
// sets hold or fail before the Enter they are for.
func newHarness(t *testing.T, idle time.Duration, maxPools int) *harness {
	t.Helper()
	h := &harness{made: map[string][]*fakePool{}}
	h.set = New(Config[string, *fakePool]{
		Make: func(ctx context.Context, key string, n int, _ func() bool) (*fakePool, error) {
			h.makes.Add(1)
			if h.hold != nil {
				<-h.hold
			}
			if h.fail != nil {
				return nil, h.fail
			}
			if key == "panics" {
				panic("no pool for you")
			}
			p := &fakePool{key: key, n: n, ctx: ctx}
			if key == "bad" {
				p.err = errors.New("bad pool")
			}
			h.made[key] = append(h.made[key], p)
			return p, nil
		},
		Close: func(ctx context.Context, p *fakePool) error {
			if p.closes.Add(1) > 1 && !h.closed() {
				t.Errorf("pool %s[%d] closed twice before the set's Close", p.key, p.n)
			}
			if p.slow != nil {
				select {
				case <-p.slow:
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			return p.err
		},
		Idle: func(p *fakePool) bool {
			idle := p.leases.Load() == 0
			if h.looked != nil {
				h.looked(p)
			}
			return idle
		},
		IdleTimeout: idle,
		MaxPools:    maxPools,
		ErrClosed:   errClosed,
		Exhausted:   func(limit int) error { return fmt.Errorf("%w: %d pools", errExhausted, limit) },
		Panicked:    func(v any) error { return fmt.Errorf("%w: %v", errPanicked, v) },
		GaveUp:      func(err error) error { return fmt.Errorf("waiting for a pool: %w", err) },
	})
	return h
}

// closed reports whether the set's Close was called.
func (h *harness) closed() bool {
	h.set.mu.Lock()
	defer h.set.mu.Unlock()
	return h.set.closed
}

// use enters key and exits it at once, returning its pool.
func (h *harness) use(t *testing.T, key string) *fakePool {
	t.Helper()
	p, err := h.tryUse(t.Context(), key)
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// tryUse is use for a goroutine other than the test's.
func (h *harness) tryUse(ctx context.Context, key string) (*fakePool, error) {
	e, err := h.set.Enter(ctx, key)
	if err != nil {
		return nil, fmt.Errorf("Enter(%q): %w", key, err)
	}
	p := e.Pool()
	h.set.Exit(e)
	return p, nil
}

// closeSet closes h's set, failing t on any error.
func (h *harness) closeSet(t *testing.T) {
	t.Helper()
	if errs, err := h.set.Close(context.Background()); err != nil || errors.Join(errs...) != nil {
		t.Fatalf("Close: %v, %v", errs, err)
	}
}

// leaseWhileLooked makes the next Idle's look enter key, take a lease of
// its pool and exit: a caller come and gone while a sweep or an eviction
// looked outside the set's lock, its lease still out.
func (h *harness) leaseWhileLooked(t *testing.T, key string) {
	h.looked = func(*fakePool) {
		h.looked = nil
		e, err := h.set.Enter(t.Context(), key)
		if err != nil {
			t.Error(err)
			return
		}
		e.Pool().leases.Add(1) // a lease outlives the Enter that took it
		h.set.Exit(e)
	}
}

// enterAsync enters key on a goroutine of its own, which sends Enter's
// error and leaves the entry, if any, unexited.
func (h *harness) enterAsync(ctx context.Context, key string) <-chan error {
	entered := make(chan error)
	go func() {
		_, err := h.set.Enter(ctx, key)
		entered <- err
	}()
	return entered
}

// closeAsync closes the set, with no deadline, on a goroutine of its own,
// which sends Close's errors joined.
func (h *harness) closeAsync() <-chan error {
	closed := make(chan error)
	go func() {
		errs, err := h.set.Close(context.Background())
		closed <- errors.Join(append(errs, err)...)
	}()
	return closed
}

// notYet fails t with format (given the result) if done has a result once
// every goroutine of the bubble is blocked.
func notYet(t *testing.T, done <-chan error, format string) {
	t.Helper()
	synctest.Wait()
	select {
	case err := <-done:
		t.Fatalf(format, err)
	default:
	}
}

func TestNewNeedsOperations(t *testing.T) {
	defer func() {
		if recover() == nil {
			t.Fatal("New with no operations did not panic")
		}
	}()
	New(Config[string, *fakePool]{})
}

func TestEnterMakesOncePerKey(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, -1, 0)
		defer h.closeSet(t)
		a := h.use(t, "a")
		if again := h.use(t, "a"); again != a {
			t.Fatal("a second use of a key made another pool")
		}
		b := h.use(t, "b")
		if a.n != 1 || b.n != 2 {
			t.Fatalf("pools numbered %d and %d, want 1 and 2", a.n, b.n)
		}
		if h.set.Len() != 2 || len(h.set.Pools()) != 2 {
			t.Fatalf("Len %d, Pools %v; want 2 of each", h.set.Len(), h.set.Pools())
		}
	})
}

func TestIdlePoolClosedAfterIdleTimeout(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = time.Minute
		h := newHarness(t, idle, 0)
		defer h.closeSet(t)
		quiet := h.use(t, "quiet") // idle from now
		leased := h.use(t, "leased")
		leased.leases.Store(1) // a lease outlives the Enter that took it
		inside, err := h.set.Enter(t.Context(), "inside")
		if err != nil {
			t.Fatal(err)
		}

		// The reaper looks every idle/4: a pool closes after IdleTimeout,
		// by 1.25 times it.
		time.Sleep(idle)
		synctest.Wait()
		if quiet.closed() {
			t.Fatal("idle pool closed by IdleTimeout")
		}
		time.Sleep(idle/4 + time.Second)
		synctest.Wait()
		if !quiet.closed() {
			t.Fatal("idle pool still open 1.25 IdleTimeout after its last use")
		}
		if _, ok := h.set.Pools()["quiet"]; ok {
			t.Fatal("closed pool still in Pools")
		}

		// Busy pools stay, however long.
		time.Sleep(10 * idle)
		synctest.Wait()
		if leased.closed() || inside.Pool().closed() {
			t.Fatalf("busy pools closed: with a lease %v, with a caller %v", leased.closed(), inside.Pool().closed())
		}

		// Once idle, they go.
		leased.leases.Store(0)
		h.set.Exit(inside)
		time.Sleep(idle + idle/4 + time.Second)
		synctest.Wait()
		if !leased.closed() || !inside.Pool().closed() || h.set.Len() != 0 {
			t.Fatalf("pools idle for 1.25 IdleTimeout still open: with a lease %v, with a caller %v, Len %d", !leased.closed(), !inside.Pool().closed(), h.set.Len())
		}

		// A key used again gets a new pool.
		if again := h.use(t, "quiet"); again == quiet || again.closed() {
			t.Fatal("a key used after its pool was closed got the closed pool")
		}
	})
}

// A sweep asks Idle outside the set's lock: a caller who leases the pool
// meanwhile, and has left by the time the sweep takes the lock again,
// keeps it open, though Idle answered from before the lease. Once the
// lease is back, sweeps close the pool.
func TestSweepKeepsAPoolLeasedWhileIdleLooked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = time.Hour
		h := newHarness(t, idle, 0)
		defer h.closeSet(t)
		p := h.use(t, "a")
		start := time.Now()
		h.set.Sweep(start) // idle from start
		h.leaseWhileLooked(t, "a")
		h.set.Sweep(start.Add(2 * idle))
		synctest.Wait()
		if p.closed() {
			t.Fatal("the sweep closed a pool leased while Idle looked at it")
		}
		p.leases.Add(-1)
		h.set.Sweep(start.Add(3 * idle)) // idle from here
		h.set.Sweep(start.Add(5 * idle))
		synctest.Wait()
		if !p.closed() {
			t.Fatal("a pool idle for two IdleTimeouts of sweeps after its lease came back is still open")
		}
	})
}

func TestUseRestartsIdleTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const idle = time.Minute
		h := newHarness(t, idle, 0)
		defer h.closeSet(t)
		p := h.use(t, "a")
		for range 10 {
			time.Sleep(idle - time.Second)
			h.use(t, "a")
		}
		synctest.Wait()
		if p.closed() {
			t.Fatal("a pool used every IdleTimeout-1s was closed")
		}
	})
}

func TestMaxPoolsEvictsLeastRecentlyUsedIdle(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, -1, 2)
		defer h.closeSet(t)
		a := h.use(t, "a")
		time.Sleep(time.Second)
		b := h.use(t, "b")
		time.Sleep(time.Second)
		h.use(t, "a") // now b is the least recently used
		time.Sleep(time.Second)

		c := h.use(t, "c")
		synctest.Wait()
		if !b.closed() || a.closed() || c.closed() {
			t.Fatalf("closed: a %v, b %v, c %v; want b alone", a.closed(), b.closed(), c.closed())
		}
		if h.set.Len() != 2 {
			t.Fatalf("Len %d, want 2", h.set.Len())
		}

		// a is older than c, but busy: c goes.
		a.leases.Store(1)
		time.Sleep(time.Second)
		d := h.use(t, "d")
		synctest.Wait()
		if !c.closed() || a.closed() {
			t.Fatalf("closed: a %v, c %v; want c alone", a.closed(), c.closed())
		}

		// Every pool busy: a new key fails, and nothing closes.
		d.leases.Store(1)
		if _, err := h.set.Enter(t.Context(), "e"); !errors.Is(err, errExhausted) {
			t.Fatalf("Enter past MaxPools with every pool busy: %v, want errExhausted", err)
		}
		synctest.Wait()
		if a.closed() || d.closed() || h.set.Len() != 2 {
			t.Fatalf("after a refused key: a closed %v, d closed %v, Len %d", a.closed(), d.closed(), h.set.Len())
		}
	})
}

// An eviction asks Idle outside the set's lock: a caller who leases the
// pool meanwhile, and has left by the time the eviction takes the lock
// again, keeps it open, though Idle answered from before the lease; the
// new key fails as one finding every pool busy does. Once the lease is
// back, the new key evicts the pool.
func TestEvictionKeepsAPoolLeasedWhileIdleLooked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, -1, 1)
		defer h.closeSet(t)
		a := h.use(t, "a")
		h.leaseWhileLooked(t, "a")
		if _, err := h.set.Enter(t.Context(), "b"); !errors.Is(err, errExhausted) {
			t.Errorf("Enter past MaxPools with the only pool leased while Idle looked: %v, want errExhausted", err)
		}
		synctest.Wait()
		if a.closed() {
			t.Fatal("the eviction closed a pool leased while Idle looked at it")
		}
		a.leases.Add(-1)
		b := h.use(t, "b")
		synctest.Wait()
		if !a.closed() || b.closed() {
			t.Fatalf("closed: a %v, b %v; want a alone once its lease is back", a.closed(), b.closed())
		}
	})
}

// Evictions that look at the same pools at once each close a pool of
// their own, and a caller for the key an eviction makes room for, come
// while it looked, gets the pool made for the key.
func TestEvictionsLookingAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, -1, 2)
		defer h.closeSet(t)
		a := h.use(t, "a")
		time.Sleep(time.Second)
		b := h.use(t, "b")
		time.Sleep(time.Second)
		var d *fakePool
		h.looked = func(*fakePool) {
			h.looked = nil
			d = h.use(t, "d") // evicts a, the least recently used
			time.Sleep(time.Second)
		}
		c := h.use(t, "c") // a has gone: evicts b
		synctest.Wait()
		if !a.closed() || !b.closed() || c.closed() || d.closed() {
			t.Fatalf("closed: a %v, b %v, c %v, d %v; want a and b", a.closed(), b.closed(), c.closed(), d.closed())
		}

		h.looked = func(*fakePool) {
			h.looked = nil
			h.use(t, "e") // evicts d
		}
		e := h.use(t, "e")
		synctest.Wait()
		if len(h.made["e"]) != 1 || h.made["e"][0] != e {
			t.Fatalf("e made %d times; want once, and that pool for both its callers", len(h.made["e"]))
		}
		if !d.closed() || c.closed() || h.set.Len() != 2 {
			t.Fatalf("closed: c %v, d %v, Len %d; want d closed, 2 pools", c.closed(), d.closed(), h.set.Len())
		}
	})
}

// Room that appears while an eviction looks is taken as it is: a pool
// being made that fails meanwhile leaves a place, and the idle pool the
// eviction found stays open.
func TestEvictionTakesRoomMadeWhileIdleLooked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, -1, 2)
		defer h.closeSet(t)
		a := h.use(t, "a")
		h.hold = make(chan struct{})
		go h.tryUse(t.Context(), "panics") // fails once let go, and leaves
		synctest.Wait()
		h.looked = func(*fakePool) {
			h.looked = nil
			close(h.hold) // left closed: later Makes go straight on
			synctest.Wait()
		}
		c := h.use(t, "c")
		synctest.Wait()
		if a.closed() || c.closed() || h.set.Len() != 2 {
			t.Fatalf("closed: a %v, c %v, Len %d; want neither closed, 2 pools", a.closed(), c.closed(), h.set.Len())
		}
	})
}

// A set closed while an eviction looks fails the Enter that looked, and
// makes no pool for it, as after any Close.
func TestEvictionOfASetClosedWhileIdleLooked(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, -1, 1)
		h.use(t, "a")
		h.looked = func(*fakePool) {
			h.looked = nil
			h.closeSet(t)
		}
		if _, err := h.set.Enter(t.Context(), "b"); !errors.Is(err, errClosed) {
			t.Errorf("Enter of a set closed while its eviction looked: %v, want errClosed", err)
		}
		synctest.Wait()
		if n := h.makes.Load(); n != 1 {
			t.Fatalf("Make called %d times; want once, for a alone", n)
		}
	})
}

func TestMakeErrorLetsTheNextUseTryAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, -1, 1)
		defer h.closeSet(t)
		h.fail = errors.New("no such tenant yet")
		if _, err := h.set.Enter(t.Context(), "a"); !errors.Is(err, h.fail) {
			t.Fatalf("Enter with Make failing: %v", err)
		}
		if h.set.Len() != 0 {
			t.Fatalf("a failed key holds a place: Len %d", h.set.Len())
		}
		h.fail = nil
		if p := h.use(t, "a"); p.closed() || h.makes.Load() != 2 {
			t.Fatalf("second use: closed %v, makes %d; want a new open pool, 2 makes", p.closed(), h.makes.Load())
		}
	})
}

// A Make that panics, on the set's goroutine, fails its pool with the
// panic as its error rather than ending the program, and the key's next
// use tries again; Close does not wait for it.
func TestMakePanicIsThePoolsError(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, -1, 0)
		defer h.closeSet(t)
		for i := range 2 {
			_, err := h.set.Enter(t.Context(), "panics")
			if !errors.Is(err, errPanicked) || !strings.Contains(err.Error(), "no pool for you") {
				t.Fatalf("Enter %d with Make panicking: %v, want the panic as the error", i+1, err)
			}
		}
		if n := h.makes.Load(); n != 2 || h.set.Len() != 0 {
			t.Fatalf("%d makes, Len %d; want each use to try again, and no place held", n, h.set.Len())
		}
	})
}

func TestWaiterForAPoolBeingMade(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, -1, 1)
		defer h.closeSet(t)
		h.hold = make(chan struct{})
		made := make(chan error)
		go func() {
			_, err := h.tryUse(t.Context(), "a")
			made <- err
		}()
		synctest.Wait() // the maker is in Make

		// A caller who gives up waiting leaves no count behind: the pool
		// can be evicted once made.
		ctx, cancel := context.WithCancel(t.Context())
		gaveUp := h.enterAsync(ctx, "a")
		synctest.Wait()
		if len(h.set.Pools()) != 0 || h.set.Len() != 1 {
			t.Fatalf("while made: Pools %v, Len %d; want none, 1", h.set.Pools(), h.set.Len())
		}
		cancel()
		if err := <-gaveUp; !errors.Is(err, context.Canceled) || !strings.HasPrefix(err.Error(), "waiting for a pool: ") {
			t.Fatalf("Enter cancelled while the pool was made: %v", err)
		}

		// One who waits gets the pool made, not another.
		got := make(chan *fakePool)
		go func() {
			p, err := h.tryUse(t.Context(), "a")
			if err != nil {
				t.Error(err)
			}
			got <- p
		}()
		synctest.Wait()
		close(h.hold)
		if err := <-made; err != nil {
			t.Fatal(err)
		}
		if p := <-got; p == nil || p != h.made["a"][0] || h.makes.Load() != 1 {
			t.Fatalf("waiter got another pool, or Make ran %d times", h.makes.Load())
		}
		synctest.Wait()
		h.hold = nil
		h.use(t, "b") // a is idle, with no count left: evicted
		synctest.Wait()
		if !h.made["a"][0].closed() {
			t.Fatal("a pool whose waiter gave up is not evictable")
		}
	})
}

func TestMakeKeepsNoCancellationOfItsOwn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, -1, 0)
		defer h.closeSet(t)
		type key struct{}
		ctx := context.WithValue(t.Context(), key{}, "caller")
		e, err := h.set.Enter(ctx, "a")
		if err != nil {
			t.Fatal(err)
		}
		defer h.set.Exit(e)
		if e.Pool().ctx.Value(key{}) != "caller" {
			t.Fatal("Make did not get the caller's ctx")
		}
	})
}

func TestCloseClosesEveryPool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.Minute, 0)
		a, bad := h.use(t, "a"), h.use(t, "bad")
		errs, err := h.set.Close(context.Background())
		if err != nil {
			t.Fatalf("Close waited in vain: %v", err)
		}
		if !a.closed() || !bad.closed() {
			t.Fatalf("after Close: a closed %v, bad closed %v", a.closed(), bad.closed())
		}
		if j := errors.Join(errs...); j == nil || j.Error() != "bad pool" {
			t.Fatalf("Close's pool errors: %v, want bad pool's", j)
		}
		if _, err := h.set.Enter(t.Context(), "a"); !errors.Is(err, errClosed) {
			t.Fatalf("Enter after Close: %v", err)
		}
		if _, err := h.set.Close(context.Background()); err != nil {
			t.Fatalf("second Close: %v", err)
		}
	})
}

// A Close called again waits again for the pools, as a pool's Close does:
// one whose first Close gave up at its ctx, a connection still held, is
// waited for by the next.
func TestSecondCloseWaitsAgain(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.Minute, 0)
		a := h.use(t, "a")
		a.slow = make(chan struct{})
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if errs, _ := h.set.Close(ctx); !errors.Is(errors.Join(errs...), context.DeadlineExceeded) {
			t.Fatalf("the first Close, the pool still closing past its ctx: %v", errs)
		}
		closed := h.closeAsync()
		notYet(t, closed, "the second Close returned (%v) while the pool was still closing")
		close(a.slow)
		if err := <-closed; err != nil {
			t.Fatalf("the second Close: %v", err)
		}
	})
}

func TestCloseWaitsForAPoolBeingMade(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.Minute, 0)
		h.hold = make(chan struct{})
		entered := h.enterAsync(t.Context(), "a")
		synctest.Wait() // in Make

		closed := h.closeAsync()
		notYet(t, closed, "Close returned (%v) while a pool was being made")
		close(h.hold)
		if err := <-entered; !errors.Is(err, errClosed) {
			t.Fatalf("Enter whose pool was made after Close: %v, want errClosed", err)
		}
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		if p := h.made["a"][0]; !p.closed() {
			t.Fatal("the pool made after Close was left open")
		}
	})
}

func TestCloseGivesUpWaitingWithItsContext(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		h := newHarness(t, time.Minute, 0)
		h.hold = make(chan struct{})
		entered := h.enterAsync(t.Context(), "a")
		synctest.Wait()

		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		if _, err := h.set.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Close with a pool still made past its ctx: %v", err)
		}
		// The maker still closes what it made, after it has failed the
		// callers: nothing the test can wait on but the maker's end.
		close(h.hold)
		if err := <-entered; !errors.Is(err, errClosed) {
			t.Fatalf("Enter: %v", err)
		}
		synctest.Wait()
		if !h.made["a"][0].closed() {
			t.Fatal("the pool made after Close gave up was left open")
		}
	})
}
