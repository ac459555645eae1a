package shoal

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal/internal/failrun"
)

// flakyServer is a fake server that can go down and come back: its dials
// fail while it is down, and the connections it served break (their holders
// find out on their next use, as a query on a killed session does). It
// counts dials and the most in flight at once.
type flakyServer struct {
	mu       sync.Mutex
	down     bool
	downErr  error // what a dial that began before the server went down fails with
	silent   bool  // while down, a dial hangs until its context ends (a network that drops packets)
	gen      int   // bumped when it goes down: connections of older gens are broken
	inFlight int
	peak     int
	dials    int
	opened   int
}

type flakyConn struct{ gen int }

func (s *flakyServer) dial(ctx context.Context) (*flakyConn, error) {
	s.mu.Lock()
	s.dials++
	s.inFlight++
	s.peak = max(s.peak, s.inFlight)
	s.mu.Unlock()
	s.mu.Lock()
	hang := s.down && s.silent
	s.mu.Unlock()
	if hang {
		<-ctx.Done()
	} else {
		time.Sleep(time.Millisecond) // a loopback connect and login
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.inFlight--
	if hang {
		return nil, ctx.Err()
	}
	if s.down {
		return nil, s.downErr
	}
	s.opened++
	return &flakyConn{gen: s.gen}, nil
}

func (s *flakyServer) setDown(down bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if down && !s.down {
		s.gen++
	}
	s.down = down
}

// use is a query on c: it fails when the server went down since c opened.
func (s *flakyServer) use(c *flakyConn) bool {
	time.Sleep(time.Millisecond)
	s.mu.Lock()
	defer s.mu.Unlock()
	return !s.down && c.gen == s.gen
}

func (s *flakyServer) counts() (dials, peak, opened int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.dials, s.peak, s.opened
}

// A pool that has never opened a connection has nothing to wait through:
// its first dial's error goes to the caller at once, not after a second of
// retries, and so does a second caller's while the pool backs off.
func TestNeverConnectedFailsAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		srv := &flakyServer{down: true, downErr: errBoom}
		p, err := New(Config[*flakyConn]{Dial: srv.dial, MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(context.Background())
		for i := range 2 {
			start := time.Now()
			_, err := p.Acquire(context.Background())
			if !errors.Is(err, errBoom) || !errors.Is(err, ErrDial) {
				t.Fatalf("acquire %d: %v, want the dial's error", i, err)
			}
			// At most the one dial (1ms here): no retry, no wait.
			if took := time.Since(start); took > 2*time.Millisecond {
				t.Fatalf("acquire %d took %s to fail on a pool that never connected", i, took)
			}
		}
		if s := p.Stats(); s.FailedAcquires != 2 {
			t.Fatalf("FailedAcquires = %d, want 2", s.FailedAcquires)
		}
	})
}

// One failed dial in a pool that was connected is a blip: callers whose
// deadlines leave room for the next try wait for it and are served, instead
// of all failing with the stale error (a refused connect during a restart).
// The next try comes after the first backoff, not at maintenance's next
// tick.
func TestOneFailedDialIsWaitedOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) { waitOutOneFailedDial(t, nil, 50*time.Millisecond) })
}

// waitOutOneFailedDial breaks the one connection of a pool (with budget b,
// if not nil), makes its next dial fail once, and checks that 8 callers
// with a minute to spare are all served, within the given time.
func waitOutOneFailedDial(t *testing.T, b Budget, within time.Duration) {
	p := poolWithAFailedDialAhead(t, b)
	defer p.Close(context.Background())
	const n = 8
	errs := make(chan error, n)
	start := time.Now()
	for range n {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			l, err := p.Acquire(ctx)
			if err == nil {
				time.Sleep(time.Millisecond)
				l.Release()
			}
			errs <- err
		}()
	}
	for range n {
		if err := <-errs; err != nil {
			t.Fatalf("a caller with a minute to spare failed after one failed dial: %v", err)
		}
	}
	if took := time.Since(start); took > within {
		t.Fatalf("the callers were served %s after one failed dial, want within %s", took, within)
	}
	if s := p.Stats(); s.DialErrors != 1 || s.FailedAcquires != 0 {
		t.Fatalf("%d dial errors, %d failed acquires; want the one failed dial and no failed acquire", s.DialErrors, s.FailedAcquires)
	}
}

// poolWithAFailedDialAhead returns a pool of one connection (with budget
// b, if not nil) whose connection has just broken and whose next dial
// fails once, as a server that drops a connection and refuses the first
// try to reconnect. The caller closes it.
func poolWithAFailedDialAhead(t *testing.T, b Budget) *Pool[*fakeConn] {
	t.Helper()
	var fail atomic.Bool
	d := &fakeDialer{}
	p, err := New(Config[*fakeConn]{MaxConns: 1, Budget: b, Close: d.close, Dial: func(ctx context.Context) (*fakeConn, error) {
		if fail.Swap(false) {
			return nil, errBoom
		}
		return d.dial(ctx)
	}})
	if err != nil {
		t.Fatal(err)
	}
	l, err := p.Acquire(context.Background())
	if err != nil {
		p.Close(context.Background())
		t.Fatal(err)
	}
	fail.Store(true)
	l.Discard() // the connection broke; the next dial fails once
	return p
}

// A server that goes down for 3s under 32 callers with 1s deadlines, 8
// connections: its callers get its error within downAfter's reach instead
// of at their deadlines, the pool dials at most 4 at once and far fewer
// than the callers ask, and once the server is back the pool reopens its 8
// connections within a few hundred milliseconds.
func TestServerDownFailsCallersAtOnceAndRecovers(t *testing.T) {
	t.Run("refusing", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			failed := outage(t, &flakyServer{downErr: errBoom}, 0)
			// Each failure comes within the blip's wait (the next tries
			// until downAfter) and the dial times of those tries.
			if slowest := failed[len(failed)-1]; slowest > 100*time.Millisecond {
				t.Errorf("the slowest failed query took %s, want at most 100ms", slowest)
			}
		})
	})
	// A server whose connects hang (a partition, a firewall that drops
	// packets) is known down only when the first dial times out: until
	// then the callers wait for it. From then on they fail at once, though
	// the probes that follow hang as long.
	t.Run("silent", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			const dialTimeout = 250 * time.Millisecond
			failed := outage(t, &flakyServer{silent: true, downErr: errBoom}, dialTimeout)
			if p99 := failed[len(failed)*99/100]; p99 > 100*time.Millisecond {
				t.Errorf("p99 of failed queries %s, want at most 100ms", p99)
			}
			if slowest := failed[len(failed)-1]; slowest > dialTimeout+10*time.Millisecond {
				t.Errorf("the slowest failed query took %s, want at most the dial timeout (%s)", slowest, dialTimeout)
			}
		})
	})
}

// outage runs 32 callers with 1s deadlines on a pool of 8 while srv goes
// down for 3s, checks the dials and the recovery, and returns how long each
// failed query took, sorted.
func outage(t *testing.T, srv *flakyServer, dialTimeout time.Duration) []time.Duration {
	p, err := New(Config[*flakyConn]{Dial: srv.dial, MaxConns: 8, DialTimeout: dialTimeout})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())

	var mu sync.Mutex
	var failed []time.Duration // how long each failed acquire or query took
	served := 0
	stop := make(chan struct{})
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			for {
				select {
				case <-stop:
					return
				default:
				}
				start := time.Now()
				ctx, cancel := context.WithTimeout(context.Background(), time.Second)
				l, err := p.Acquire(ctx)
				ok := err == nil && srv.use(l.Value())
				cancel()
				switch {
				case err != nil:
				case ok:
					l.Release()
				default:
					l.Discard()
				}
				mu.Lock()
				if ok {
					served++
				} else {
					failed = append(failed, time.Since(start))
				}
				mu.Unlock()
				if !ok {
					time.Sleep(time.Millisecond) // a request handler's next request
				}
			}
		})
	}
	time.Sleep(time.Second)
	srv.setDown(true)
	dialsBefore, _, _ := srv.counts()
	time.Sleep(3 * time.Second)
	dialsDown, peak, _ := srv.counts()
	srv.setDown(false)
	back := time.Now()
	WaitFor(t, "8 connections open again after the server's return", func() bool { return p.Stats().TotalConns >= 8 })
	reopened := time.Since(back)
	close(stop)
	wg.Wait()

	mu.Lock()
	defer mu.Unlock()
	if len(failed) == 0 {
		t.Fatal("no query failed while the server was down")
	}
	slices.Sort(failed)
	if n := dialsDown - dialsBefore; n > 100 {
		t.Errorf("%d dials in the 3s the server was down, want at most 100", n)
	}
	if peak > 4 {
		t.Errorf("%d dials in flight at once, want at most 4", peak)
	}
	// The silent server's last probe may hang until its timeout.
	if reopened > 300*time.Millisecond+dialTimeout {
		t.Errorf("8 connections open again %s after the server's return, want within 300ms", reopened)
	}
	t.Logf("%d served, %d failed (p50 %s, p99 %s, max %s), %d dials while down, peak %d in flight, reopened in %s",
		served, len(failed), failed[len(failed)/2], failed[len(failed)*99/100], failed[len(failed)-1],
		dialsDown-dialsBefore, peak, reopened)
	return failed
}

// The error of an acquire that waited for a dial that failed counts the
// caller among those waiting, as a timed-out acquire's does, and keeps the
// wait apart from the dial's own words.
func TestDialFailedAcquireErrorCountsTheCaller(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		d := &fakeDialer{err: errBoom, block: make(chan struct{})}
		p, err := New(Config[*fakeConn]{Name: "orders", Dial: d.dial, MaxConns: 4})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(context.Background())
		done := make(chan error)
		go func() {
			_, err := p.Acquire(context.Background())
			done <- err
		}()
		synctest.Wait() // the caller waits, the dial hangs
		// Not a whole second: maintenance's pass, due each second, would
		// come at the same instant as the failure and may start the next
		// dial before the caller counts the dials in flight.
		time.Sleep(1500 * time.Millisecond)
		close(d.block)
		err = <-done
		var ae *AcquireError
		if !errors.As(err, &ae) || ae.Waiting != 1 || ae.Waited != 1500*time.Millisecond {
			t.Fatalf("acquire: %v (%+v), want an AcquireError that waited 1.5s with the caller counted", err, ae)
		}
		want := "shoal pool \"orders\": acquire: dial failed: boom (waited 1.5s for one of 4 connections: 0 in use, 1 waiting)"
		if err.Error() != want {
			t.Fatalf("error %q\nwant  %q", err, want)
		}
	})
}

// A caller that joins the queue while the pool backs off after a failed
// dial is served by the dial at the backoff's end, not at maintenance's next
// tick: maintenance, which slept with nobody waiting, is woken to dial then.
func TestCallerArrivingDuringBackoffIsServedWhenItEnds(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p := poolWithAFailedDialAhead(t, nil)
		defer p.Close(context.Background())
		// A caller in a hurry meets the failed dial: it cannot wait for the
		// next try, and nobody waits once it has its error.
		hurried, cancel := context.WithTimeout(context.Background(), failrun.BackoffMin/2)
		defer cancel()
		if _, err := p.Acquire(hurried); !errors.Is(err, errBoom) {
			t.Fatalf("the hurried caller: %v, want the dial's error", err)
		}
		synctest.Wait() // maintenance has gone back to sleep
		start := time.Now()
		l, err := p.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		l.Release()
		if took := time.Since(start); took > failrun.BackoffMin {
			t.Fatalf("served %s after joining the queue, want at the backoff's end (%s)", took, failrun.BackoffMin)
		}
	})
}

// slowPermits is a testBudget whose permits each take wait to come, as
// shoaletcd's do while another process lets its connection go.
type slowPermits struct {
	*testBudget
	wait time.Duration
}

func (b *slowPermits) Acquire(ctx context.Context) (BudgetPermit, error) {
	time.Sleep(b.wait)
	return b.testBudget.Acquire(ctx)
}

// A dial that waited long for its budget permit and then failed once is a
// blip too: the wait was for another pool, not the server failing, so the
// failure run starts at the connect. Counted from the permit wait, the one
// failure made the server "down" and failed every waiter at once. Served
// within two permit waits and the backoff.
func TestOneFailedDialAfterASlowPermitIsWaitedOut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := &slowPermits{testBudget: newTestBudget(t, 1), wait: 300 * time.Millisecond}
		waitOutOneFailedDial(t, b, 700*time.Millisecond)
	})
}

// Dials refused for their budget permit (ErrPermitRefused: the server
// answered, another process holds the slot) never make the server count as
// down, even in a pool that never connected or after many in a row: a
// caller with time left waits for the dial that gets a usable permit.
func TestRefusedPermitsAreNotAServerDown(t *testing.T) {
	for _, refusals := range []int32{1, 6} {
		t.Run(fmt.Sprint(refusals, " refused"), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var left atomic.Int32
				left.Store(refusals)
				d := &fakeDialer{}
				p, err := New(Config[*fakeConn]{MaxConns: 1, Close: d.close, Dial: func(ctx context.Context) (*fakeConn, error) {
					if left.Add(-1) >= 0 {
						return nil, fmt.Errorf("slot held elsewhere: %w", ErrPermitRefused)
					}
					return d.dial(ctx)
				}})
				if err != nil {
					t.Fatal(err)
				}
				defer p.Close(context.Background())
				ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
				defer cancel()
				l, err := p.Acquire(ctx)
				if err != nil {
					t.Fatalf("a caller with 10s to spare failed on %d refused permits: %v", refusals, err)
				}
				l.Release()
				if s := p.Stats(); s.DialErrors != int64(refusals) || s.FailedAcquires != 0 {
					t.Fatalf("%d dial errors, %d failed acquires; want %d and none", s.DialErrors, s.FailedAcquires, refusals)
				}
			})
		})
	}
}

// A refused permit long after a failed dial (no dial in between) does not
// extend that old run of failures into a server that is down: the caller
// with time left waits for the next dial and is served.
func TestRefusedPermitEndsAStaleRun(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var mode atomic.Int32 // 0 dials, 1 fails, 2 refuses the permit once
		d := &fakeDialer{}
		p, err := New(Config[*fakeConn]{MaxConns: 1, Close: d.close, Dial: func(ctx context.Context) (*fakeConn, error) {
			switch mode.Load() {
			case 1:
				return nil, errBoom
			case 2:
				mode.Store(0)
				return nil, fmt.Errorf("slot held elsewhere: %w", ErrPermitRefused)
			}
			return d.dial(ctx)
		}})
		if err != nil {
			t.Fatal(err)
		}
		defer p.Close(context.Background())
		l, err := p.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		mode.Store(1)
		l.Discard()
		// One failed dial, for a caller whose deadline ends before the
		// next try; then nobody needs a dial for 5s.
		short, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		_, err = p.Acquire(short)
		cancel()
		if !errors.Is(err, errBoom) {
			t.Fatalf("the short caller: %v, want the dial's error", err)
		}
		time.Sleep(5 * time.Second)
		mode.Store(2)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		l, err = p.Acquire(ctx)
		if err != nil {
			t.Fatalf("a caller with 10s to spare failed on a refused permit 5s after the last failure: %v", err)
		}
		l.Release()
	})
}
