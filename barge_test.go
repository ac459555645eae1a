package shoal

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// acquireLater starts an Acquire with the given timeout on a goroutine of
// its own and returns where its lease arrives (see acquireAsync).
func acquireLater(p *Pool[*fakeConn], timeout time.Duration) <-chan Lease[*fakeConn] {
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	got := make(chan Lease[*fakeConn], 1)
	go func() {
		defer cancel()
		l, err := p.Acquire(ctx)
		if err != nil {
			l = Lease[*fakeConn]{}
		}
		got <- l
	}()
	return got
}

// received returns the lease that arrives on ch, and fails the test if the
// acquire that was to send it failed.
func received(t *testing.T, ch <-chan Lease[*fakeConn]) Lease[*fakeConn] {
	t.Helper()
	l := <-ch
	if l.rec == nil {
		t.Fatal("a waiting Acquire failed")
	}
	return l
}

func TestBargingReleaseGoesToNextCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A window far longer than the test: the waiter stays young
		// throughout. No time passes on the fake clock between the release
		// and the TryAcquire, so the barging timer cannot hand it over first.
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, BargeWindow: time.Hour})
		held := mustAcquire(t, p)
		conn := held.Value()
		waiter := acquireLater(p, 10*time.Second)
		wantWaiters(t, p, 1)

		held.Release()
		again, err := p.TryAcquire()
		if err != nil {
			t.Fatalf("TryAcquire right after a release with a young waiter: %v; the connection should have stayed on the stack", err)
		}
		if again.Value() != conn {
			t.Fatalf("TryAcquire got conn %d, want the released conn %d", again.Value().id, conn.id)
		}
		if st := p.Stats(); st.Waiting != 1 || st.BargeMisses != 0 {
			t.Fatalf("Waiting = %d, BargeMisses = %d; want 1 and 0 (the releaser came back)", st.Waiting, st.BargeMisses)
		}

		// Discarding frees a place in MaxConns; the new connection dialled for
		// the waiter goes to it, barging or not (it would otherwise wait for
		// the hour-long window's timer and time out).
		again.Discard()
		l := received(t, waiter)
		if l.Value() == conn {
			t.Fatalf("the waiter got the discarded connection")
		}
		l.Release()
	})
}

func TestBargingOldWaiterGetsTheRelease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const window = 20 * time.Millisecond
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, BargeWindow: window})
		held := mustAcquire(t, p)
		waiter := acquireLater(p, 10*time.Second)
		wantWaiters(t, p, 1)
		// Once the waiter has waited past the window, a release is its.
		time.Sleep(3 * window)

		held.Release()
		if l, err := p.TryAcquire(); !errors.Is(err, ErrWouldBlock) {
			if l.rec != nil {
				l.Release()
			}
			t.Fatalf("TryAcquire after a release with a waiter past BargeWindow: %v; want ErrWouldBlock (the waiter's)", err)
		}
		received(t, waiter).Release()
	})
}

func TestBargingTimerHandsOverAnIdleConnection(t *testing.T) {
	// The releaser never comes back: the connection sits on the stack with
	// a young waiter, and the barging timer must give it to the waiter.
	// With a window of an hour too: the window bounds how long the waiter
	// can be passed over, not how long a connection may sit idle while it
	// waits, so the timer hands it over after idleGrace (without that the
	// waiter would time out here).
	for _, window := range []time.Duration{20 * time.Millisecond, time.Hour} {
		t.Run(window.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 1, BargeWindow: window})
				if p.ex.barge.grace != idleGrace {
					t.Fatalf("grace = %s, want idleGrace (%s) for a window of %s", p.ex.barge.grace, idleGrace, window)
				}
				held := mustAcquire(t, p)
				waiter := acquireLater(p, 5*time.Second)
				wantWaiters(t, p, 1)
				released := time.Now()
				held.Release()
				l := received(t, waiter)
				if took := time.Since(released); took > idleGrace {
					t.Errorf("the waiter got the idle connection %s after its release, want within idleGrace (%s)", took, idleGrace)
				}
				if l.Value() != held.Value() || d.dials.Load() != 1 {
					t.Fatalf("waiter got conn %d after %d dials, want the released conn and 1 dial", l.Value().id, d.dials.Load())
				}
				l.Release()
			})
		})
	}
}

func TestBargingGraceIsNoLongerThanTheWindow(t *testing.T) {
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, BargeWindow: 50 * time.Microsecond})
	if p.ex.barge.grace != 50*time.Microsecond {
		t.Fatalf("grace = %s, want the 50µs window", p.ex.barge.grace)
	}
}

func TestBargingMissSuspendsBarging(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		// A releaser that does not come back leaves its connection to the
		// timer, and a waiter waits for nothing: a miss. Releases then go to
		// the waiters in order for a while, and barge again after it.
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, BargeWindow: time.Hour})
		p.ex.barge.suspend = 50 * time.Millisecond
		held := mustAcquire(t, p)
		first := acquireLater(p, 5*time.Second)
		wantWaiters(t, p, 1)
		held.Release() // the waiter is young: the connection is left idle, and missed
		l := received(t, first)
		missedAt := time.Now()
		if m := p.Stats().BargeMisses; m != 1 {
			t.Fatalf("Stats.BargeMisses = %d after one miss, want 1", m)
		}

		second := acquireLater(p, 5*time.Second)
		wantWaiters(t, p, 1)
		if p.ex.mayBarge(p.now()) {
			t.Fatalf("after a miss, with a young waiter, mayBarge(now) = true; want barging suspended")
		}
		l.Release() // suspended: straight to the waiter
		if again, err := p.TryAcquire(); !errors.Is(err, ErrWouldBlock) {
			if again.rec != nil {
				again.Release()
			}
			t.Fatalf("TryAcquire after a release while barging is suspended: %v; want ErrWouldBlock (the connection is the waiter's)", err)
		}
		l = received(t, second)

		third := acquireLater(p, 5*time.Second)
		wantWaiters(t, p, 1)
		time.Sleep(time.Until(missedAt.Add(2 * p.ex.barge.suspend)))
		if !p.ex.mayBarge(p.now()) {
			t.Fatalf("after the suspension, with a young waiter, mayBarge(now) = false; want barging back on")
		}
		l.Release()
		received(t, third).Release()
	})
}

func TestBargingWindowStretchesWithTheCrowd(t *testing.T) {
	// The window is BargeWindow while at most crowdPerConn callers wait per
	// open connection, and stretches in proportion past that, up to
	// maxStretch times BargeWindow. Asked of mayBarge at chosen instants,
	// with real waiters queued, so that no timing enters the test.
	const conns = 2
	const after = time.Hour // nothing the test does takes that long
	for _, tc := range []struct {
		waiters int
		window  time.Duration
	}{
		{waiters: 1, window: after},
		{waiters: crowdPerConn * conns, window: after},
		{waiters: 2 * crowdPerConn * conns, window: 2 * after},
		{waiters: 10 * crowdPerConn * conns, window: maxStretch * after},
	} {
		t.Run(fmt.Sprintf("%d waiters", tc.waiters), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: conns, BargeWindow: after})
				for range conns {
					defer mustAcquire(t, p).Release()
				}
				ctx, cancel := context.WithCancel(context.Background())
				var wg sync.WaitGroup
				defer wg.Wait()
				defer cancel()
				for range tc.waiters {
					wg.Go(func() {
						if l, err := p.Acquire(ctx); err == nil {
							l.Release()
						}
					})
				}
				wantWaiters(t, p, tc.waiters)

				head := p.wq.headSince.Load()
				if !p.ex.mayBarge(head + int64(tc.window) - 1) {
					t.Errorf("mayBarge(head + %s - 1ns) = false with %d waiters on %d connections; want barging until the window of %s", tc.window, tc.waiters, conns, tc.window)
				}
				if p.ex.mayBarge(head + int64(tc.window)) {
					t.Errorf("mayBarge(head + %s) = true with %d waiters on %d connections; want hand-off once the oldest waited the window", tc.window, tc.waiters, conns)
				}
			})
		})
	}
}

// TestBargeHandOffRacingCloseLeavesNothingOpen: the barging timer pops an
// idle connection for a waiter; Close fails that waiter before the
// hand-off, so the connection goes back on the stack. It must be closed
// there, or Close never drains.
func TestBargeHandOffRacingCloseLeavesNothingOpen(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
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
		wantWaiters(t, p, 1)
		// What a barging release does: the connection goes on the stack while
		// someone waits, for the timer to hand over later.
		c := l.rec.c
		l.end()
		c.lease.free()
		p.ex.parts[c.part].idle.push(&p.ex.slots, c.slot)

		closed := make(chan error, 1)
		var once sync.Once
		p.ex.handOffIdle(func(*conn[*fakeConn]) { // the timer's hand-off, with Close between pop and hand-off
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
	})
}

// A caller whose context ends sooner than the oldest waiter has waited does
// not barge: the connection a barging release left on the stack goes to the
// oldest waiter, and the caller waits its turn behind it, giving up in the
// queue at its deadline. A caller with time to spare barges as before.
func TestBargingCallerShortOfTimeWaitsItsTurn(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, BargeWindow: time.Hour})
		held := mustAcquire(t, p)
		conn := held.Value()
		waiter := acquireLater(p, 10*time.Second)
		wantWaiters(t, p, 1)
		time.Sleep(5 * time.Millisecond) // the waiter has waited 5ms

		held.Release() // young waiter, hour-long window: onto the stack
		short, cancel := context.WithTimeout(context.Background(), 2*time.Millisecond)
		defer cancel()
		start := time.Now()
		if l, err := p.Acquire(short); err == nil {
			t.Fatalf("a caller with 2ms left got conn %d ahead of a waiter of 5ms", l.Value().id)
		} else if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("the caller short of time: %v, want its deadline", err)
		}
		if waitedFor := time.Since(start); waitedFor != 2*time.Millisecond {
			t.Fatalf("the caller short of time returned after %v, want at its deadline (2ms)", waitedFor)
		}
		l := received(t, waiter)
		if l.Value() != conn {
			t.Fatalf("the waiter got conn %d, want the released conn %d", l.Value().id, conn.id)
		}

		// The same with time to spare: it barges.
		waiter = acquireLater(p, 10*time.Second)
		wantWaiters(t, p, 1)
		time.Sleep(5 * time.Millisecond)
		l.Release()
		ample, cancel2 := context.WithTimeout(context.Background(), time.Second)
		defer cancel2()
		again, err := p.Acquire(ample)
		if err != nil || again.Value() != conn {
			t.Fatalf("a caller with 1s left after a release with a waiter of 5ms: %v, %v; want the released connection", again.rec, err)
		}
		again.Release()
		received(t, waiter).Release()
	})
}

// Each miss pauses barging for 100ms, written out rather than read from
// the code's constant.
func TestBargingPausesFor100msAfterAMiss(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, BargeWindow: time.Hour})
		held := mustAcquire(t, p)
		first := acquireLater(p, 5*time.Second)
		wantWaiters(t, p, 1)
		held.Release()
		l := received(t, first)
		missedAt := p.now()
		second := acquireLater(p, 5*time.Second)
		wantWaiters(t, p, 1)
		if p.ex.mayBarge(missedAt + int64(100*time.Millisecond) - 1) {
			t.Errorf("barging back on before 100ms after a miss")
		}
		if !p.ex.mayBarge(missedAt + int64(100*time.Millisecond)) {
			t.Errorf("barging still off 100ms after a miss")
		}
		l.Release()
		received(t, second).Release()
	})
}
