package shoal

import (
	"context"
	"errors"
	"sync"
	"testing"
	"testing/synctest"
	"time"
)

// waitTrace is one TraceWait call.
type waitTrace struct {
	ctx   context.Context
	start time.Time
	wait  time.Duration
	err   error
}

// recordingTracer is an Observer that records every TraceWait call.
type recordingTracer struct {
	BaseObserver
	mu    sync.Mutex
	calls []waitTrace
}

func (r *recordingTracer) TraceWait(ctx context.Context, start time.Time, wait time.Duration, err error) {
	r.mu.Lock()
	r.calls = append(r.calls, waitTrace{ctx, start, wait, err})
	r.mu.Unlock()
}

func (r *recordingTracer) taken() []waitTrace {
	r.mu.Lock()
	defer r.mu.Unlock()
	calls := r.calls
	r.calls = nil
	return calls
}

type traceKey struct{}

// TestWaitTracerSeesEveryWaitWithTheCallersContext: an acquire served at
// once by an idle connection is not traced; one that waits is, once, with the caller's context,
// its start and its wait; one whose context ends is traced with the error
// Acquire returned. Through MultiObserver too.
func TestWaitTracerSeesEveryWaitWithTheCallersContext(t *testing.T) {
	for _, tc := range []struct {
		multi   bool
		streams int
	}{{false, 1}, {true, 1}, {false, 2}} {
		synctest.Test(t, func(t *testing.T) {
			multi := tc.multi
			tr := &recordingTracer{}
			var obs Observer = tr
			if multi {
				obs = MultiObserver(&countingObserver{}, tr)
			}
			p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, MaxStreams: tc.streams, MaxWaiters: 1, Observer: obs})

			// The first acquire waits for the first dial, and is traced.
			mustAcquire(t, p).Release()
			if calls := tr.taken(); len(calls) != 1 {
				t.Fatalf("multi=%v streams=%d: %d traces of the acquire that waited for the first dial, want 1", multi, tc.streams, len(calls))
			}
			var held []Lease[*fakeConn]
			for range tc.streams {
				held = append(held, mustAcquire(t, p))
			}
			if calls := tr.taken(); len(calls) != 0 {
				t.Fatalf("multi=%v streams=%d: an acquire served at once was traced: %+v", multi, tc.streams, calls)
			}

			const hold = 30 * time.Millisecond
			ctx := context.WithValue(context.Background(), traceKey{}, "caller")
			before := time.Now()
			go func() {
				synctest.Wait() // the caller below waits in the queue
				if n := p.Stats().Waiting; n != 1 {
					t.Errorf("%d callers waiting, want 1", n)
				}
				// A second caller while one waits: refused by MaxWaiters
				// without joining the queue, so not traced.
				if _, err := p.Acquire(context.Background()); !errors.Is(err, ErrExhausted) {
					t.Errorf("a second waiter past MaxWaiters 1: %v, want ErrExhausted", err)
				}
				time.Sleep(hold)
				held[0].Release()
			}()
			l, err := p.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			calls := tr.taken()
			if len(calls) != 1 {
				t.Fatalf("multi=%v: %d traces of one waited acquire, want 1", multi, len(calls))
			}
			c := calls[0]
			if c.ctx.Value(traceKey{}) != "caller" || c.err != nil {
				t.Errorf("multi=%v: trace has ctx value %v and err %v; want the caller's context and nil", multi, c.ctx.Value(traceKey{}), c.err)
			}
			if c.start.Before(before) || c.wait != hold {
				t.Errorf("multi=%v: trace start %v (acquire began %v), wait %v; want a start after the acquire began and a wait of %v", multi, c.start, before, c.wait, hold)
			}

			short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
			_, aerr := p.Acquire(short)
			cancel()
			calls = tr.taken()
			if aerr == nil || len(calls) != 1 || !errors.Is(calls[0].err, context.DeadlineExceeded) || calls[0].err.Error() != aerr.Error() {
				t.Errorf("multi=%v: timed-out acquire returned %v, traced %+v; want one trace with the same error", multi, aerr, calls)
			}
			l.Release()
			for _, h := range held[1:] {
				h.Release()
			}
		})
	}
	// A MultiObserver of observers that do not trace is no WaitTracer: the
	// pool reads no clock for it.
	if _, ok := MultiObserver(&countingObserver{}, BaseObserver{}).(WaitTracer); ok {
		t.Error("MultiObserver without a WaitTracer member implements WaitTracer")
	}
}
