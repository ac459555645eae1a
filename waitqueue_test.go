package shoal

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
)

// newTestQueue returns a queue on its own, outside any pool.
func newTestQueue() *waitQueue[int] {
	return &waitQueue[int]{count: new(atomic.Int32)}
}

func queued(t *testing.T, q *waitQueue[int], since int64) *waiter[int] {
	t.Helper()
	w := q.get()
	w.since = since
	if r := q.enqueue(w, 0); r != enqueued {
		t.Fatalf("enqueue: %v", r)
	}
	return w
}

// The oldest waiter is served first, a waiter leaves from the middle
// without disturbing the order, and the hot count and headSince follow.
func TestWaitQueueIsFIFOAndLeavesFromTheMiddle(t *testing.T) {
	q := newTestQueue()
	a, b, c := queued(t, q, 1), queued(t, q, 2), queued(t, q, 3)
	if q.count.Load() != 3 || q.headSince.Load() != 1 {
		t.Fatalf("count %d, headSince %d; want 3, 1", q.count.Load(), q.headSince.Load())
	}
	if !q.remove(b) || q.remove(b) {
		t.Fatalf("remove: want true once, then false")
	}
	if w := q.popOldest(); w != a || q.headSince.Load() != 3 {
		t.Fatalf("popOldest: want the oldest, headSince 3 after (got %d)", q.headSince.Load())
	}
	if w := q.popOldest(); w != c {
		t.Fatalf("popOldest: want the third")
	}
	if q.popOldest() != nil || q.count.Load() != 0 {
		t.Fatalf("want an empty queue")
	}
}

// Waiters taken off the queue rejoin it in their places by since, the
// newest of them behind the older ones, and headSince follows; a closed
// queue refuses them.
func TestWaitQueueRejoinKeepsTheOrderOfWaiting(t *testing.T) {
	q := newTestQueue()
	a, b := queued(t, q, 1), queued(t, q, 2)
	queued(t, q, 3)
	q.popOldest()
	q.popOldest()
	if !q.rejoin(b) || !q.rejoin(a) {
		t.Fatal("rejoin refused by an open queue")
	}
	if q.headSince.Load() != 1 || q.count.Load() != 3 {
		t.Fatalf("headSince %d, count %d; want 1, 3", q.headSince.Load(), q.count.Load())
	}
	for want := int64(1); want <= 3; want++ {
		if w := q.popOldest(); w == nil || w.since != want {
			t.Fatalf("popOldest: want the waiter since %d", want)
		}
	}
	q.failAll(ErrClosed, true)
	if q.rejoin(a) {
		t.Fatal("a closed queue took a waiter back")
	}
}

// MaxWaiters bounds the queue, and a closed queue refuses everyone.
func TestWaitQueueBoundAndClose(t *testing.T) {
	q := newTestQueue()
	queued(t, q, 1)
	if r := q.enqueue(q.get(), 1); r != queueFull {
		t.Fatalf("enqueue past the bound: %v, want queueFull", r)
	}
	q.failAll(ErrClosed, true)
	if r := q.enqueue(q.get(), 0); r != queueClosed {
		t.Fatalf("enqueue after close: %v, want queueClosed", r)
	}
}

// wait returns the delivery that a deliverer owes the waiter it took off.
func TestWaitQueueWaitReceivesItsDelivery(t *testing.T) {
	q := newTestQueue()
	w := queued(t, q, 1)
	l := &leaseRecord[int]{}
	go func() {
		if got := q.popOldest(); got == w {
			got.ch <- handed[int]{lease: Lease[int]{rec: l, gen: 3}}
		}
	}()
	h, _, ok := q.wait(context.Background(), w)
	if !ok || h.lease.rec != l || h.lease.gen != 3 {
		t.Fatalf("wait: %+v, %v; want the delivery", h, ok)
	}
}

// A waiter whose context ends leaves the queue. When a deliverer took it
// off first, the delivery is received and its lease returned for the caller
// to put back: it is never lost, whichever side wins.
func TestWaitQueueGivingUpNeverLosesALease(t *testing.T) {
	for range 200 {
		q := newTestQueue()
		w := queued(t, q, 1)
		l := &leaseRecord[int]{}
		ctx, cancel := context.WithCancel(context.Background())
		var wg sync.WaitGroup
		delivered := false
		wg.Add(1)
		go func() {
			defer wg.Done()
			if got := q.popOldest(); got != nil {
				delivered = true
				got.ch <- handed[int]{lease: Lease[int]{rec: l, gen: 1}}
			}
		}()
		cancel()
		h, waiting, ok := q.wait(ctx, w)
		wg.Wait()
		switch {
		case ok:
			// The delivery won the select: the waiter has the lease.
			if h.lease.rec != l {
				t.Fatalf("wait: ok without the lease")
			}
		case delivered:
			if h.lease.rec != l {
				t.Fatalf("gave up after a delivery: returned %+v, want the lease to put back", h)
			}
		default:
			if waiting != 1 || q.count.Load() != 0 {
				t.Fatalf("gave up first: waiting %d, count %d; want 1, 0", waiting, q.count.Load())
			}
		}
	}
}

// failAll and failOlderThan hand their error to the waiters they take, and
// failOlderThan leaves the younger ones queued.
func TestWaitQueueFailOlderThan(t *testing.T) {
	q := newTestQueue()
	old, young := queued(t, q, 1), queued(t, q, 5)
	if n := q.failOlderThan(3, ErrExhausted); n != 1 {
		t.Fatalf("failOlderThan: %d, want 1", n)
	}
	if h := <-old.ch; !errors.Is(h.err, ErrExhausted) {
		t.Fatalf("old waiter got %v", h.err)
	}
	if since, ok := q.oldestSince(); !ok || since != 5 {
		t.Fatalf("oldestSince: %d %v, want 5", since, ok)
	}
	q.failAll(ErrClosed, false)
	if h := <-young.ch; !errors.Is(h.err, ErrClosed) {
		t.Fatalf("young waiter got %v", h.err)
	}
}
