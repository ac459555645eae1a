package shoal

import (
	"context"
	"errors"
	"math"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// TestLifetimeNearMaxInt64MeansForever: a MaxLifetime of math.MaxInt64 (a
// common way to write "for ever"), with or without a jitter as long, gives
// connections that live, not ones expired on arrival, and no panic in the
// dial that draws the jitter.
func TestLifetimeNearMaxInt64MeansForever(t *testing.T) {
	for _, jitter := range []time.Duration{0, math.MaxInt64} {
		var r reasons
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1,
			MaxLifetime: math.MaxInt64, LifetimeJitter: jitter,
			Hooks: Hooks[*fakeConn]{OnDisconnect: r.hook}})
		for range 3 {
			mustAcquire(t, p).Release()
		}
		if s := p.Stats(); s.Dials != 1 || r.count(ReasonLifetime) != 0 {
			t.Errorf("jitter %v: %d dials and %d lifetime closes for 3 acquires, want 1 and 0", jitter, s.Dials, r.count(ReasonLifetime))
		}
	}
}

// TestWaiterRejoiningSeesIdleConnection: a waiter handed a connection that
// fails its check rejoins the queue; a connection released while it was
// off the queue (pushed idle, since nobody seemed to wait) must still
// reach it, even though the dial for a replacement never ends.
func TestWaiterRejoiningSeesIdleConnection(t *testing.T) {
	var rejected atomic.Pointer[fakeConn]
	checking, resume := make(chan struct{}), make(chan struct{})
	var dials atomic.Int32
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 2,
		Dial: func(ctx context.Context) (*fakeConn, error) {
			if n := dials.Add(1); n <= 2 {
				return &fakeConn{id: int(n)}, nil
			}
			<-ctx.Done() // the replacement's dial hangs until the pool closes
			return nil, ctx.Err()
		},
		Hooks: Hooks[*fakeConn]{BeforeAcquire: func(_ context.Context, c *fakeConn) bool {
			if rejected.Load() == c {
				close(checking)
				<-resume
				return false
			}
			return true
		}}})
	first, second := mustAcquire(t, p), mustAcquire(t, p)
	rejected.Store(first.Value())
	got := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		l, err := p.Acquire(ctx)
		if err == nil {
			l.Release()
		}
		got <- err
	}()
	waitForWaiters(t, p, 1)
	first.Release() // handed to the waiter, whose check now blocks
	<-checking
	second.Release() // nobody is queued at this instant: it goes idle
	close(resume)
	if err := <-got; err != nil {
		t.Fatalf("the waiter failed while a connection sat idle: %v (stats %+v)", err, p.Stats())
	}
}

// TestBargeHandOffRacingCloseLeavesNothingOpen: the barging timer pops an
// idle connection for a waiter; Close fails that waiter before the
// hand-off, so the connection goes back on the stack. It must be closed
// there, or Close never drains.
func TestBargeHandOffRacingCloseLeavesNothingOpen(t *testing.T) {
	d := &fakeDialer{}
	p, err := New(Config[*fakeConn]{MaxConns: 1, BargeWindow: time.Hour, Dial: d.dial, Close: d.close})
	if err != nil {
		t.Fatal(err)
	}
	l := mustAcquire(t, p)
	waiter := make(chan error, 1)
	go func() {
		_, err := p.Acquire(context.Background())
		waiter <- err
	}()
	waitForWaiters(t, p, 1)
	// What a barging release does: the connection goes on the stack while
	// someone waits, for the timer to hand over later.
	c := l.s.c
	l.end()
	c.lease.free()
	p.ex.parts[c.part].idle.push(&p.ex.slots, c.slot)

	closed := make(chan error, 1)
	var once sync.Once
	p.serveWaiters(func(*conn[*fakeConn]) { // the timer's hand-off, with Close between pop and hand-off
		once.Do(func() {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
				defer cancel()
				closed <- p.Close(ctx)
			}()
			if err := <-waiter; !errors.Is(err, ErrClosed) {
				t.Errorf("the waiter got %v, want ErrClosed", err)
			}
		})
	})
	if err := <-closed; err != nil {
		t.Fatalf("Close: %v, with %d connections left open", err, d.openConns())
	}
	if n := d.openConns(); n != 0 {
		t.Errorf("%d connections open after Close", n)
	}
}

// TestCloseEndsWarm: Close cancels the dials Warm started, as it does the
// pool's own, and nothing dials after Close returned; Warm then reports
// ErrClosed.
func TestCloseEndsWarm(t *testing.T) {
	for range 20 { // maintenance and Warm race for the first dial: try both
		var dials atomic.Int32
		p, err := New(Config[*fakeConn]{MaxConns: 3, MinIdle: 3, MaxDialing: 1,
			Dial: func(ctx context.Context) (*fakeConn, error) {
				dials.Add(1)
				<-ctx.Done() // a server that never answers
				return nil, ctx.Err()
			}})
		if err != nil {
			t.Fatal(err)
		}
		warmed := make(chan error, 1)
		go func() { warmed <- p.Warm(context.Background()) }()
		eventually(t, "a dial in flight", func() bool { return p.Stats().Dialing > 0 })
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		err = p.Close(ctx)
		cancel()
		if err != nil {
			t.Fatalf("Close with a dial in flight: %v (stats %+v)", err, p.Stats())
		}
		if err := <-warmed; !errors.Is(err, ErrClosed) {
			t.Fatalf("Warm on a pool closed under it: %v, want ErrClosed", err)
		}
		n := dials.Load()
		time.Sleep(20 * time.Millisecond)
		if s := p.Stats(); s.Dialing != 0 || dials.Load() != n {
			t.Fatalf("after Close: %d dials in flight, %d started since", s.Dialing, dials.Load()-n)
		}
	}
}

// TestStatsAcquiresNeverFalls: while a connection closes (its hooks and
// Close running), Stats.Acquires does not dip: it is exported as a
// counter.
func TestStatsAcquiresNeverFalls(t *testing.T) {
	closing, finish := make(chan struct{}), make(chan struct{})
	p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 1})
	p.cfg.Close = func(c *fakeConn) error {
		close(closing)
		<-finish
		return d.close(c)
	}
	for range 10 {
		mustAcquire(t, p).Release()
	}
	l := mustAcquire(t, p)
	before := p.Stats().Acquires
	go l.Discard()
	<-closing
	during := p.Stats().Acquires
	close(finish)
	eventually(t, "the connection to close", func() bool { return p.Stats().Closed == 1 })
	if after := p.Stats().Acquires; during < before || after != 11 {
		t.Errorf("Acquires %d before, %d while closing, %d after; want 11 throughout", before, during, after)
	}
}

// heldObserver keeps the last hold time a release reported.
type heldObserver struct {
	BaseObserver
	held atomic.Int64
}

func (o *heldObserver) ObserveRelease(h time.Duration) { o.held.Store(int64(h)) }

// TestHijackReportsHoldTime: a hijacked lease reports how long it was held,
// as a release does.
func TestHijackReportsHoldTime(t *testing.T) {
	o := &heldObserver{}
	p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 1, Observer: o})
	l := mustAcquire(t, p)
	time.Sleep(10 * time.Millisecond)
	c, err := l.Hijack()
	if err != nil {
		t.Fatal(err)
	}
	d.close(c)
	if h := time.Duration(o.held.Load()); h < 10*time.Millisecond {
		t.Errorf("Hijack reported a hold of %v, want >= 10ms", h)
	}
}

// TestMaxWaitersErrorNamesTheBound: an acquire refused because MaxWaiters
// callers already wait says so.
func TestMaxWaitersErrorNamesTheBound(t *testing.T) {
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, MaxWaiters: 1})
	l := mustAcquire(t, p)
	defer l.Release()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	go p.Acquire(ctx)
	waitForWaiters(t, p, 1)
	_, err := p.Acquire(ctx)
	if !errors.Is(err, ErrExhausted) || !strings.Contains(err.Error(), "MaxWaiters (1) callers already waiting") {
		t.Fatalf("Acquire past MaxWaiters: %v, want ErrExhausted naming MaxWaiters (1)", err)
	}
}

// TestNoDialAfterClose: acquires racing Close leave no dial in flight once
// Close has returned, and start none after: every dial is decided under
// dial.mu, where Close sets closed, and a dial counts until its goroutine's
// last step. (A race: before the fix, 6 of 20 runs under -race failed.)
func TestNoDialAfterClose(t *testing.T) {
	for range 300 {
		var dials atomic.Int32
		p, err := New(Config[*fakeConn]{MaxConns: 8, Dial: func(ctx context.Context) (*fakeConn, error) {
			dials.Add(1)
			return &fakeConn{}, nil
		}})
		if err != nil {
			t.Fatal(err)
		}
		var wg sync.WaitGroup
		start := make(chan struct{})
		for range 4 {
			wg.Go(func() {
				<-start
				for range 20 {
					if l, err := p.TryAcquire(); err == nil {
						l.Discard() // frees a place, so the next acquire dials
					}
				}
			})
		}
		close(start)
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		n, s := dials.Load(), p.Stats()
		wg.Wait()
		if s.Dialing != 0 || dials.Load() != n {
			t.Fatalf("after Close returned: %d dials in flight, %d started since", s.Dialing, dials.Load()-n)
		}
	}
}

// TestExpiredContextDoesNotFailHealthChecks: an acquire whose deadline
// passes during a health check does not blame the connection, nor go on to
// check (and close) every other idle one: they stay open and idle.
func TestExpiredContextDoesNotFailHealthChecks(t *testing.T) {
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 8, HealthCheckAfter: time.Millisecond,
		HealthCheck: func(ctx context.Context, _ *fakeConn) error {
			select {
			case <-ctx.Done(): // a ping needs time the caller no longer has
				return ctx.Err()
			case <-time.After(20 * time.Millisecond):
				return nil
			}
		}})
	var held []Lease[*fakeConn]
	for range 8 {
		held = append(held, mustAcquire(t, p))
	}
	for _, l := range held {
		l.Release()
	}
	time.Sleep(5 * time.Millisecond) // past HealthCheckAfter: the next take checks
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Millisecond)
	defer cancel()
	if l, err := p.Acquire(ctx); err == nil {
		l.Release()
		t.Fatal("Acquire succeeded although every health check outlasts its deadline")
	} else if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("Acquire: %v, want DeadlineExceeded", err)
	}
	if s := p.Stats(); s.Closed != 0 || s.IdleConns != 8 {
		t.Errorf("after one acquire timed out in a health check: %d closed, %d idle; want 0 and 8", s.Closed, s.IdleConns)
	}
}

// scrapingAttacher calls the pool's Stats from another goroutine the
// moment it is attached, as a metrics scrape may.
type scrapingAttacher struct {
	BaseObserver
	done chan struct{}
}

func (a *scrapingAttacher) Attach(stats func() Stats) (detach func()) {
	go func() {
		defer close(a.done)
		for range 100 {
			stats()
		}
	}()
	return func() {}
}

// TestStatsDuringNewIsSafe: New attaches its observer only once the pool
// is whole, so a scrape that calls Stats at once races nothing (run with
// -race).
func TestStatsDuringNewIsSafe(t *testing.T) {
	for range 20 {
		a := &scrapingAttacher{done: make(chan struct{})}
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 4, BargeWindow: time.Millisecond, Observer: a})
		<-a.done
		mustAcquire(t, p).Release()
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
