package shoal

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal/internal/failrun"
)

// The rule an acquire meets while the pool backs off with nothing open: fail
// now only if the server counts as down (the pool never connected, the
// failure is permanent, or dials will have failed for downAfter by the next
// try) or the caller's deadline comes before the next try.
func TestFailFastRule(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 1})
		d.block = make(chan struct{}) // a probe dial hangs until the pool closes
		type state struct {
			failingFor, nextTryIn time.Duration
			neverConnected        bool
			permanent             bool
		}
		set := func(st state) {
			p.dial.mu.Lock()
			now := p.now()
			p.dial.connected = !st.neverConnected
			// A run of one failure: the error failFast hands out, and
			// whether it is permanent. The times are set below.
			p.dial.run = failrun.Run{}
			p.dial.run.Fail(failrun.Failure{Err: &dialError{err: errBoom}, Permanent: st.permanent, Started: now, At: now}, false)
			p.dial.failingSince = now - int64(st.failingFor)
			p.dial.backoffUntil.Store(now + int64(st.nextTryIn))
			p.dial.mu.Unlock()
		}
		withDeadline := func(d time.Duration) context.Context {
			ctx, cancel := context.WithTimeout(context.Background(), d)
			t.Cleanup(cancel)
			return ctx
		}
		blip := state{nextTryIn: downAfter / 2}
		for _, tc := range []struct {
			name string
			st   state
			ctx  context.Context
			fail bool
		}{
			{"blip, no deadline", blip, context.Background(), false},
			{"blip, deadline after the next try", blip, withDeadline(time.Hour), false},
			{"blip, deadline before the next try", blip, withDeadline(downAfter / 10), true},
			{"blip, a timeout written as never", blip, withDeadline(math.MaxInt64), false},
			{"down by the next try", state{failingFor: downAfter / 2, nextTryIn: downAfter / 2}, context.Background(), true},
			{"down, deadline after the next try", state{failingFor: 2 * downAfter, nextTryIn: time.Hour}, withDeadline(2 * time.Hour), true},
			{"never connected", state{nextTryIn: failrun.BackoffMin, neverConnected: true}, context.Background(), true},
			{"permanent", state{nextTryIn: time.Second, permanent: true}, context.Background(), true},
			{"blip, backoff over", state{nextTryIn: -time.Millisecond}, withDeadline(time.Millisecond), false},
			// Down with the backoff over: the caller still fails at once, and
			// starts a probe of the server (which hangs here).
			{"down, backoff over", state{failingFor: 2 * downAfter, nextTryIn: -time.Millisecond}, context.Background(), true},
			{"never connected, backoff over", state{nextTryIn: -time.Millisecond, neverConnected: true}, context.Background(), true},
		} {
			set(tc.st)
			err := p.failFast(tc.ctx)
			if tc.fail != (err != nil) || err != nil && !errors.Is(err, errBoom) {
				t.Errorf("%s: failFast = %v, want failure %v with the dial error", tc.name, err, tc.fail)
			}
		}
		if n := p.cap.dialing.Load(); n != 1 {
			t.Errorf("%d probe dials in flight, want the one the first caller after the backoff started", n)
		}
	})
}

func TestFailDeadlinesBefore(t *testing.T) {
	var count atomic.Int32
	q := &waitQueue[int]{count: &count}
	ws := make([]*waiter[int], 4)
	for i, dl := range []int64{50, 150, 100, 1 << 62} {
		ws[i] = q.get()
		ws[i].deadline = dl
		q.enqueue(ws[i], 0)
	}
	if n := q.failDeadlinesBefore(120, errBoom); n != 2 {
		t.Fatalf("failed %d waiters, want the 2 whose deadlines come before 120", n)
	}
	for i, want := range []bool{true, false, true, false} {
		select {
		case h := <-ws[i].ch:
			if !want || !errors.Is(h.err, errBoom) {
				t.Errorf("waiter %d got %v", i, h.err)
			}
		default:
			if want {
				t.Errorf("waiter %d not failed", i)
			}
		}
		if ws[i].queued == want {
			t.Errorf("waiter %d queued %v", i, ws[i].queued)
		}
	}
	if count.Load() != 2 {
		t.Fatalf("queue length %d, want 2", count.Load())
	}
}

// A failure after a quiet spell (nobody needed a dial since the last one
// failed) starts a new run of failures: one failed dial minutes after the
// last is a blip, not a server that has been down all along.
func TestAFailureAfterAQuietSpellIsABlip(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1})
		p.dial.mu.Lock()
		p.dial.connected = true
		p.dial.mu.Unlock()
		failDial(p, &dialError{err: errBoom})
		time.Sleep(time.Minute) // nobody needs a dial meanwhile
		failDial(p, &dialError{err: errBoom})
		ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
		defer cancel()
		if err := p.failFast(ctx); err != nil {
			t.Fatalf("one failure after a minute without dials counted as a server down: %v", err)
		}
		// Failing again right away continues that new run: still a blip.
		failDial(p, &dialError{err: errBoom})
		if err := p.failFast(ctx); err != nil {
			t.Fatalf("a second failure at once counted as a server down: %v", err)
		}
	})
}

// failDial records err as a background dial's failure, as dialAndAdopt
// does, for a pool with no dial in flight.
func failDial[T any](p *Pool[T], err error) {
	down, nextTry := p.recordDialFailure(err, p.now(), true)
	p.dialFailed(err, down, nextTry)
}
