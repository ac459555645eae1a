package shoal

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestCloseSemantics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDialer{}
		p, err := New(Config[*fakeConn]{Dial: d.dial, Close: d.close, MaxConns: 2})
		if err != nil {
			t.Fatal(err)
		}
		held := mustAcquire(t, p)
		other := mustAcquire(t, p)
		waiterErr := make(chan error, 1)
		go func() {
			_, err := p.Acquire(context.Background())
			waiterErr <- err
		}()
		wantWaiters(t, p, 1)

		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Millisecond)
		defer cancel()
		if err := p.Close(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Close with a lease out: %v, want the context's error", err)
		}
		if err := <-waiterErr; !errors.Is(err, ErrClosed) {
			t.Fatalf("waiter woke with %v, want ErrClosed", err)
		}
		other.Release()
		synctest.Wait()
		if !other.Value().closed.Load() {
			t.Fatal("connection released into a closed pool not closed")
		}
		if held.Value().closed.Load() {
			t.Fatal("leased connection closed under its holder")
		}
		if _, err := p.Acquire(context.Background()); !errors.Is(err, ErrClosed) {
			t.Fatalf("Acquire after Close: %v", err)
		}
		if _, err := p.TryAcquire(); !errors.Is(err, ErrClosed) {
			t.Fatalf("TryAcquire after Close: %v", err)
		}
		if err := p.Warm(context.Background()); !errors.Is(err, ErrClosed) {
			t.Fatalf("Warm after Close: %v", err)
		}
		held.Release()
		if err := p.Close(context.Background()); err != nil {
			t.Fatalf("second Close: %v", err)
		}
		if s := p.Stats(); s.TotalConns != 0 || s.Closed != 2 {
			t.Fatalf("stats %+v", s)
		}
	})
}

func TestCloseClosesIdleAtOnce(t *testing.T) {
	d := &fakeDialer{}
	p, err := New(Config[*fakeConn]{Dial: d.dial, Close: d.close, MaxConns: 3, Partitions: 3})
	if err != nil {
		t.Fatal(err)
	}
	var leases []Lease[*fakeConn]
	for i := 0; i < 3; i++ {
		leases = append(leases, mustAcquire(t, p))
	}
	for _, l := range leases {
		l.Release()
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if d.closes.Load() != 3 {
		t.Fatalf("closed %d of 3 idle connections", d.closes.Load())
	}
}

func TestCloseCancelsDialsInFlight(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDialer{block: make(chan struct{})}
		p, err := New(Config[*fakeConn]{Dial: d.dial, MaxConns: 2})
		if err != nil {
			t.Fatal(err)
		}
		go p.Acquire(context.Background())
		synctest.Wait()
		if n := d.dials.Load(); n != 1 {
			t.Fatalf("%d dials started for a waiting acquire, want 1", n)
		}
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	})
}

func TestCloseMultiplexed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDialer{}
		p, err := New(Config[*fakeConn]{Dial: d.dial, Close: d.close, MaxConns: 2, MaxStreams: 3})
		if err != nil {
			t.Fatal(err)
		}
		a, b := mustAcquire(t, p), mustAcquire(t, p)
		done := make(chan error)
		go func() { done <- p.Close(context.Background()) }()
		synctest.Wait() // Close has closed the pool and waits for the leases
		if !p.hot.closed.Load() {
			t.Fatal("the pool is not closed while Close waits")
		}
		a.Release()
		if a.Value().closed.Load() {
			t.Fatal("closed a connection with a lease still out")
		}
		b.Release()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		if !a.Value().closed.Load() {
			t.Fatal("connection not closed")
		}
	})
}

// TestCloseEndsWarm: Close cancels the dials Warm started, as it does the
// pool's own, and nothing dials after Close returned; Warm then reports
// ErrClosed.
func TestCloseEndsWarm(t *testing.T) {
	for range 20 { // maintenance and Warm race for the first dial: try both
		synctest.Test(t, func(t *testing.T) { closeEndsWarm(t) })
	}
}

// closeEndsWarm is one round of TestCloseEndsWarm, in a bubble of its own.
func closeEndsWarm(t *testing.T) {
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
	synctest.Wait()
	if s := p.Stats(); s.Dialing == 0 {
		t.Fatalf("%+v; want a dial in flight", s)
	}
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
	synctest.Wait() // whatever Close left behind has run
	if s := p.Stats(); s.Dialing != 0 || dials.Load() != n {
		t.Fatalf("after Close: %d dials in flight, %d started since", s.Dialing, dials.Load()-n)
	}
}

// slowLeakObserver takes 10 seconds over each leak it is told of.
type slowLeakObserver struct {
	BaseObserver
	done atomic.Bool
}

// ObserveLeak sleeps, then notes that it returned.
func (o *slowLeakObserver) ObserveLeak(LeakReport) {
	time.Sleep(10 * time.Second)
	o.done.Store(true)
}

// Close returns only once no goroutine of the pool is left: here the
// maintenance goroutine is 10 seconds into an Observer's ObserveLeak.
func TestCloseWaitsForTheMaintenanceGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := &slowLeakObserver{}
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, LeakThreshold: time.Second, LeakReclaim: true, Observer: o})
		mustAcquire(t, p) // leaked, reclaimed
		time.Sleep(1500 * time.Millisecond)
		synctest.Wait()
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !o.done.Load() {
			t.Errorf("Close returned while the maintenance goroutine was still in the Observer")
		}
	})
}
