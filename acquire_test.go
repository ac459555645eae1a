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
)

func TestAcquireReleaseReuses(t *testing.T) {
	p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 2})
	l := mustAcquire(t, p)
	first := l.Value()
	l.Release()
	l2 := mustAcquire(t, p)
	if l2.Value() != first {
		t.Fatalf("second acquire got conn %d, want the idle conn %d", l2.Value().id, first.id)
	}
	l2.Release()
	if got := d.dials.Load(); got != 1 {
		t.Fatalf("dials = %d, want 1", got)
	}
	s := p.Stats()
	if s.Acquires != 2 || s.TotalConns != 1 || s.IdleConns != 1 || s.InUseConns != 0 {
		t.Fatalf("stats %+v", s)
	}
}

func TestExclusiveNeverLeasedTwice(t *testing.T) {
	// With strict hand-off and with barging (BargeWindow), which sends
	// releases to the idle stacks while waiters are young.
	for _, after := range []time.Duration{0, 100 * time.Microsecond} {
		t.Run("BargeWindow="+after.String(), func(t *testing.T) { neverLeasedTwice(t, after) })
	}
}

func neverLeasedTwice(t *testing.T, bargeWindow time.Duration) {
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 4, Partitions: 2, BargeWindow: bargeWindow})
	const goroutines, rounds = 32, 300
	var wg sync.WaitGroup
	for range goroutines {
		wg.Go(func() {
			for i := range rounds {
				l := mustAcquire(t, p)
				c := l.Value()
				if n := c.inUse.Add(1); n != 1 {
					t.Errorf("conn %d leased %d times at once", c.id, n)
				}
				if c.closed.Load() {
					t.Errorf("conn %d handed out after close", c.id)
				}
				c.inUse.Add(-1)
				if i%50 == 0 {
					l.Discard()
				} else {
					l.Release()
				}
			}
		})
	}
	wg.Wait()
	s := p.Stats()
	if s.TotalConns > 4 {
		t.Fatalf("TotalConns %d > MaxConns", s.TotalConns)
	}
	if s.Acquires != goroutines*rounds {
		t.Fatalf("Acquires = %d, want %d", s.Acquires, goroutines*rounds)
	}
	if s.Waiting != 0 || s.InUseConns != 0 {
		t.Fatalf("after the run: %+v", s)
	}
}

func TestStealsBeforeDialing(t *testing.T) {
	p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 8, Partitions: 8})
	// One connection, resting in one partition. Whatever partition each
	// acquire starts from, it must find that connection rather than dial.
	l := mustAcquire(t, p)
	l.Release()
	for i := 0; i < 200; i++ {
		l := mustAcquire(t, p)
		l.Release()
	}
	if got := d.dials.Load(); got != 1 {
		t.Fatalf("dials = %d, want 1: an acquire dialled while a partition had an idle connection", got)
	}
}

func TestWaitersServedFirstComeFirstServed(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1})
		held := mustAcquire(t, p)
		const n = 5
		order := make(chan int, n)
		var wg sync.WaitGroup
		for i := 0; i < n; i++ {
			wg.Add(1)
			go func() {
				defer wg.Done()
				l, err := p.Acquire(context.Background())
				if err != nil {
					return // counted below
				}
				order <- i
				l.Release()
			}()
			wantWaiters(t, p, i+1) // enqueue strictly in order
		}
		held.Release()
		wg.Wait()
		close(order)
		want := 0
		for got := range order {
			if got != want {
				t.Fatalf("waiter %d served before waiter %d", got, want)
			}
			want++
		}
		if want != n {
			t.Fatalf("%d of %d waiters served", want, n)
		}
	})
}

func TestCanceledWaiterPassesConnectionOn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1})
		held := mustAcquire(t, p)

		ctx, cancel := context.WithCancel(context.Background())
		errc := make(chan error, 1)
		go func() {
			_, err := p.Acquire(ctx)
			errc <- err
		}()
		wantWaiters(t, p, 1)
		got := acquireAsync(context.Background(), p)
		wantWaiters(t, p, 2)

		cancel()
		err := <-errc
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("canceled waiter got %v, want context.Canceled", err)
		}
		held.Release()
		select {
		case l := <-got:
			if l.rec == nil {
				t.Fatal("the second waiter failed")
			}
			l.Release()
		case <-time.After(10 * time.Second):
			t.Fatal("the second waiter never got the connection")
		}
		if s := p.Stats(); s.CanceledAcquires != 1 {
			t.Fatalf("CanceledAcquires = %d, want 1", s.CanceledAcquires)
		}
	})
}

// A waiter whose context ends at the very moment a lease is handed to it
// must pass the lease on. Hammer that race and check nothing is lost, with
// strict hand-off and with barging (BargeWindow).
func TestCancelRaceLosesNothing(t *testing.T) {
	for _, after := range []time.Duration{0, 50 * time.Microsecond} {
		t.Run("BargeWindow="+after.String(), func(t *testing.T) { cancelRace(t, after) })
	}
}

func cancelRace(t *testing.T, bargeWindow time.Duration) {
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 2, BargeWindow: bargeWindow})
	var wg sync.WaitGroup
	for g := 0; g < 16; g++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := 0; i < 200; i++ {
				ctx, cancel := context.WithTimeout(context.Background(), time.Duration(i%7)*time.Microsecond)
				l, err := p.Acquire(ctx)
				cancel()
				if err == nil {
					l.Release()
				} else if !errors.Is(err, context.DeadlineExceeded) {
					t.Errorf("unexpected error %v", err)
				}
			}
		}()
	}
	wg.Wait()
	s := p.Stats()
	if s.Waiting != 0 || s.InUseConns != 0 || s.IdleConns != s.TotalConns || s.TotalConns > 2 {
		t.Fatalf("after the storm: %+v", s)
	}
	// Both connections must still be usable.
	a, b := mustAcquire(t, p), mustAcquire(t, p)
	a.Release()
	b.Release()
}

func TestAcquireErrorSaysWhatItWaitedFor(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 2})
		a, b := mustAcquire(t, p), mustAcquire(t, p)
		defer a.Release()
		defer b.Release()
		const timeout = 20 * time.Millisecond
		ctx, cancel := context.WithTimeout(context.Background(), timeout)
		defer cancel()
		_, err := p.Acquire(ctx)
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want DeadlineExceeded", err)
		}
		var ae *AcquireError
		if !errors.As(err, &ae) {
			t.Fatalf("got %T, want *AcquireError", err)
		}
		msg := err.Error()
		for _, want := range []string{"acquire: context deadline exceeded (waited ", "for one of 2 connections: 2 in use, 1 waiting)"} {
			if !strings.Contains(msg, want) {
				t.Errorf("message %q lacks %q", msg, want)
			}
		}
		if ae.Waited != timeout {
			t.Errorf("Waited = %v, want the caller's timeout (%v)", ae.Waited, timeout)
		}
	})
}

// A pool of one connection is waited for in the singular.
func TestAcquireErrorOfAOneConnectionPool(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1})
		a := mustAcquire(t, p)
		defer a.Release()
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		_, err := p.Acquire(ctx)
		if msg := fmt.Sprint(err); !strings.Contains(msg, "(waited 1s for its one connection: 1 in use, 1 waiting)") {
			t.Errorf("message %q, want it to wait for its one connection", msg)
		}
	})
}

func TestAcquireWithDoneContextFailsAtOnce(t *testing.T) {
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1})
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := p.Acquire(ctx); !errors.Is(err, context.Canceled) {
		t.Fatalf("got %v, want context.Canceled", err)
	}
}

func TestTryAcquire(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 1})
		if _, err := p.TryAcquire(); !errors.Is(err, ErrWouldBlock) {
			t.Fatalf("empty pool: got %v, want ErrWouldBlock", err)
		}
		// It started a dial in the background; once that lands a try succeeds.
		synctest.Wait()
		if s := p.Stats(); s.IdleConns != 1 {
			t.Fatalf("%+v; want the connection TryAcquire dialled in the background, idle", s)
		}
		l, err := p.TryAcquire()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := p.TryAcquire(); !errors.Is(err, ErrWouldBlock) {
			t.Fatalf("full pool: got %v, want ErrWouldBlock", err)
		}
		l.Release()
		if d.dials.Load() != 1 {
			t.Fatalf("dials = %d, want 1", d.dials.Load())
		}
	})
}

func TestMaxWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, MaxWaiters: 1})
		held := mustAcquire(t, p)
		waiter := acquireAsync(context.Background(), p)
		wantWaiters(t, p, 1)
		_, err := p.Acquire(context.Background())
		if !errors.Is(err, ErrExhausted) {
			t.Fatalf("got %v, want ErrExhausted", err)
		}
		held.Release()
		if l := <-waiter; l.rec == nil {
			t.Fatal("the waiter within MaxWaiters failed")
		} else {
			l.Release()
		}
		if s := p.Stats(); s.RejectedAcquires != 1 {
			t.Fatalf("RejectedAcquires = %d", s.RejectedAcquires)
		}
	})
}

func TestDoubleReleaseIsHarmless(t *testing.T) {
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1})
	l := mustAcquire(t, p)
	l.Release()
	l.Release()
	l.Discard()
	s := p.Stats()
	if s.IdleConns != 1 || s.Closed != 0 {
		t.Fatalf("a second Release or Discard changed the pool: %+v", s)
	}
	// The connection is handed out once, not twice.
	a := mustAcquire(t, p)
	if _, err := p.TryAcquire(); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("connection handed out twice: %v", err)
	}
	a.Release()
}

func TestDoReleasesDiscardsAndRepanics(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d := newTestPool(t, Config[*fakeConn]{
			MaxConns: 1,
			Broken:   func(err error) bool { return errors.Is(err, errBoom) },
		})
		ctx := context.Background()
		var first *fakeConn
		if err := p.Do(ctx, func(c *fakeConn) error { first = c; return nil }); err != nil {
			t.Fatal(err)
		}
		plain := errors.New("not broken")
		if err := p.Do(ctx, func(c *fakeConn) error { return plain }); err != plain {
			t.Fatalf("Do returned %v, want fn's error", err)
		}
		if first.closed.Load() {
			t.Fatal("a non-broken error closed the connection")
		}
		if err := p.Do(ctx, func(c *fakeConn) error { return errBoom }); err != errBoom {
			t.Fatalf("Do returned %v", err)
		}
		synctest.Wait()
		if !first.closed.Load() {
			t.Fatal("a broken error did not discard the connection")
		}
		func() {
			defer func() {
				if r := recover(); r != "kaboom" {
					t.Fatalf("recovered %v, want the fn's panic", r)
				}
			}()
			_ = p.Do(ctx, func(c *fakeConn) error { panic("kaboom") })
		}()
		synctest.Wait()
		if n := d.closes.Load(); n != 2 {
			t.Fatalf("%d connections closed, want the broken one and the one whose fn panicked", n)
		}
		if s := p.Stats(); s.TotalConns != 0 || s.InUseConns != 0 {
			t.Fatalf("stats after panic: %+v", s)
		}
	})
}

// TestWaiterRejoiningSeesIdleConnection: a waiter handed a connection that
// fails its check rejoins the queue; a connection released while it was
// off the queue (pushed idle, since nobody seemed to wait) must still
// reach it, even though the dial for a replacement never ends.
func TestWaiterRejoiningSeesIdleConnection(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
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
		wantWaiters(t, p, 1)
		first.Release() // handed to the waiter, whose check now blocks
		<-checking
		second.Release() // nobody is queued at this instant: it goes idle
		close(resume)
		if err := <-got; err != nil {
			t.Fatalf("the waiter failed while a connection sat idle: %v (stats %+v)", err, p.Stats())
		}
	})
}

// TestMaxWaitersErrorNamesTheBound: an acquire refused because MaxWaiters
// callers already wait says so.
func TestMaxWaitersErrorNamesTheBound(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, MaxWaiters: 1})
		l := mustAcquire(t, p)
		defer l.Release()
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		go p.Acquire(ctx)
		wantWaiters(t, p, 1)
		_, err := p.Acquire(ctx)
		if !errors.Is(err, ErrExhausted) || !strings.Contains(err.Error(), "MaxWaiters (1) callers already waiting") {
			t.Fatalf("Acquire past MaxWaiters: %v, want ErrExhausted naming MaxWaiters (1)", err)
		}
	})
}

// The last dial's error follows the cause in its own words, not under a
// second "dial failed".
func TestAcquireErrorNamesTheLastDialOnce(t *testing.T) {
	err := &AcquireError{Err: context.DeadlineExceeded, MaxConns: 2, Waited: time.Second,
		LastDial: &dialError{err: errors.New("dial tcp 127.0.0.1:1: connect: connection refused")}}
	msg := err.Error()
	if want := "; last dial failed: dial tcp 127.0.0.1:1: connect: connection refused"; !strings.HasSuffix(msg, want) {
		t.Errorf("message %q, want it to end %q", msg, want)
	}
	if strings.Count(msg, "dial failed") != 1 {
		t.Errorf("message %q says dial failed more than once", msg)
	}
}
