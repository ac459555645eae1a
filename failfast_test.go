package shoal

import (
	"context"
	"errors"
	"math"
	"sync/atomic"
	"testing"
	"time"
)

// One failed dial is a blip: callers whose deadlines leave room for the next
// try wait for it and are served, instead of all failing with the stale
// error (a cold pool after one refused connect, a failover's promotion).
func TestOneFailedDialDoesNotFailCallersWithTime(t *testing.T) {
	var dials atomic.Int32
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 4, Dial: func(ctx context.Context) (*fakeConn, error) {
		if dials.Add(1) == 1 {
			return nil, errBoom
		}
		return &fakeConn{}, nil
	}})
	const n = 8
	errs := make(chan error, n)
	for range n {
		go func() {
			ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
			defer cancel()
			l, err := p.Acquire(ctx)
			if err == nil {
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
	if s := p.Stats(); s.DialErrors != 1 {
		t.Fatalf("%d dial errors, want the one", s.DialErrors)
	}
}

// The rule an acquire meets while the pool backs off with nothing open: fail
// now only if the server counts as down or the caller's deadline comes
// before the next try.
func TestFailFastRule(t *testing.T) {
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1})
	set := func(failingFor, nextTryIn time.Duration) {
		p.dial.mu.Lock()
		now := p.now()
		p.dial.lastErr = &dialError{err: errBoom}
		p.dial.failingSince = now - int64(failingFor)
		p.dial.backoffUntil = now + int64(nextTryIn)
		p.dial.mu.Unlock()
	}
	withDeadline := func(d time.Duration) context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), d)
		t.Cleanup(cancel)
		return ctx
	}
	for _, tc := range []struct {
		name                  string
		failingFor, nextTryIn time.Duration
		ctx                   context.Context
		fail                  bool
	}{
		{"blip, no deadline", 0, time.Hour, context.Background(), false},
		{"blip, deadline after the next try", 0, time.Hour, withDeadline(2 * time.Hour), false},
		{"blip, deadline before the next try", 0, time.Hour, withDeadline(time.Minute), true},
		{"blip, a timeout written as never", 0, time.Hour, withDeadline(math.MaxInt64), false},
		{"down, no deadline", 2 * downAfter, time.Hour, context.Background(), true},
		{"down, deadline after the next try", 2 * downAfter, time.Hour, withDeadline(2 * time.Hour), true},
		{"backoff over", 2 * downAfter, -time.Millisecond, context.Background(), false},
	} {
		set(tc.failingFor, tc.nextTryIn)
		err := p.failFast(tc.ctx)
		if tc.fail != (err != nil) || err != nil && !errors.Is(err, errBoom) {
			t.Errorf("%s: failFast = %v, want failure %v with the dial error", tc.name, err, tc.fail)
		}
	}
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
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1})
	p.dial.mu.Lock()
	then := p.now() - int64(time.Minute)
	p.dial.lastErr, p.dial.lastErrAt, p.dial.failingSince = &dialError{err: errBoom}, then, then
	p.dial.mu.Unlock()
	p.dialFailed(&dialError{err: errBoom}, p.now())
	ctx, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if err := p.failFast(ctx); err != nil {
		t.Fatalf("one failure after a minute without dials counted as a server down: %v", err)
	}
	// Failing again right away continues that new run: still a blip.
	p.dialFailed(&dialError{err: errBoom}, p.now())
	if err := p.failFast(ctx); err != nil {
		t.Fatalf("a second failure at once counted as a server down: %v", err)
	}
}
