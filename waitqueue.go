package shoal

import (
	"context"
	"sync"
	"sync/atomic"
)

// waiter is one caller parked in Acquire. It is recycled through a
// sync.Pool, channel included, so that waiting does not allocate either.
type waiter[T any] struct {
	prev, next *waiter[T]
	queued     bool           // in the queue; guarded by waitQueue.mu
	since      int64          // pool clock when it started waiting
	deadline   int64          // pool clock at which its context ends; math.MaxInt64 for never
	inTurn     bool           // takes nothing idle ahead of older waiters (Pool.acquireInTurn)
	ch         chan handed[T] // capacity 1: a delivery never blocks the deliverer
}

// handed is what a waiter receives: a lease, or the reason it gets none.
type handed[T any] struct {
	lease Lease[T]
	err   error
}

// waitQueue is a FIFO of waiters: the oldest is served first. Removal from
// the middle (a waiter whose context ended) is O(1).
//
// The protocol that makes sure no delivery is lost: whoever takes a waiter
// off the queue (under mu) owes it exactly one delivery on its channel. A
// waiter that gives up first tries to take itself off; if someone else
// already has, it must receive the delivery in flight and put the lease
// back. wait is the waiter's whole side of it.
type waitQueue[T any] struct {
	mu     sync.Mutex
	head   *waiter[T]
	tail   *waiter[T]
	closed bool
	count  *atomic.Int32 // the pool's hot copy of the length, read without mu
	// headSince is the since of the oldest waiter, read without mu when
	// count is above 0 (it is set before count rises and is stale only
	// while count is 0). Only BargeWindow reads it.
	headSince atomic.Int64
	// tracer is the Observer's WaitTracer, if it has one: every wait in
	// the queue is reported to it.
	tracer WaitTracer
	pool   sync.Pool
}

// wait blocks until w, which is queued, gets its delivery, and returns it;
// or, when ctx ends first, returns ok false and how many were waiting
// (w included) as it gave up. A delivery that was already on its way then
// is received and returned in late: the caller must put its lease back, so
// that nothing is lost.
func (q *waitQueue[T]) wait(ctx context.Context, w *waiter[T]) (h handed[T], waiting int, ok bool) {
	done := ctx.Done()
	if done == nil {
		return <-w.ch, 0, true // a context that never ends: a plain receive is cheaper
	}
	select {
	case h = <-w.ch:
		return h, 0, true
	case <-done:
	}
	// Counted before we leave the queue, so the count includes us.
	waiting = int(q.count.Load())
	if !q.remove(w) {
		// Taken off by a deliverer: its delivery is owed to us, and its
		// lease, if it carries one, is the caller's to put back.
		return <-w.ch, waiting, false
	}
	return handed[T]{}, waiting, false
}

func (q *waitQueue[T]) get() *waiter[T] {
	if w, ok := q.pool.Get().(*waiter[T]); ok {
		return w
	}
	return &waiter[T]{ch: make(chan handed[T], 1)}
}

// put recycles a waiter whose channel is empty and which is off the queue.
func (q *waitQueue[T]) put(w *waiter[T]) { q.pool.Put(w) }

// enqueueResult says why enqueue refused.
type enqueueResult int

const (
	enqueued enqueueResult = iota
	queueClosed
	queueFull
)

// enqueue appends w unless the queue is closed or already holds maxWaiters
// (0 = unlimited).
func (q *waitQueue[T]) enqueue(w *waiter[T], maxWaiters int) enqueueResult {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return queueClosed
	}
	if maxWaiters > 0 && int(q.count.Load()) >= maxWaiters {
		return queueFull
	}
	q.linkBeforeLocked(w, nil)
	return enqueued
}

// rejoin puts w back on the queue after a deliverer took it off and the
// lease it handed failed its check, unless the queue is closed. w goes
// back to its place by since, not to the end: it has waited that long, and
// what judges the waiters by the head (load shedding's failOlderThan and
// oldestSince, barging's headSince) needs the oldest there.
func (q *waitQueue[T]) rejoin(w *waiter[T]) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.closed {
		return false
	}
	// w was the oldest waiter when it was taken off, so only another
	// rejoining waiter can be older: the walk stops at once, or nearly.
	next := q.head
	for next != nil && next.since <= w.since {
		next = next.next
	}
	q.linkBeforeLocked(w, next)
	return true
}

// linkBeforeLocked puts w on the queue just before next, or at the end when
// next is nil. q.mu must be held and w off the queue.
func (q *waitQueue[T]) linkBeforeLocked(w, next *waiter[T]) {
	w.queued = true
	w.next = next
	if next != nil {
		w.prev = next.prev
		next.prev = w
	} else {
		w.prev = q.tail
		q.tail = w
	}
	if w.prev != nil {
		w.prev.next = w
	} else {
		q.head = w
		q.headSince.Store(w.since)
	}
	q.count.Add(1)
}

// unlinkLocked takes w off the queue. q.mu must be held and w queued.
func (q *waitQueue[T]) unlinkLocked(w *waiter[T]) {
	if w.prev != nil {
		w.prev.next = w.next
	} else {
		q.head = w.next
		if w.next != nil {
			q.headSince.Store(w.next.since)
		}
	}
	if w.next != nil {
		w.next.prev = w.prev
	} else {
		q.tail = w.prev
	}
	w.prev, w.next, w.queued = nil, nil, false
	q.count.Add(-1)
}

// remove takes w off the queue and reports whether it was still on it. When
// it was not, a delivery to w is in flight (or done) and w must receive it.
func (q *waitQueue[T]) remove(w *waiter[T]) bool {
	q.mu.Lock()
	defer q.mu.Unlock()
	if !w.queued {
		return false
	}
	q.unlinkLocked(w)
	return true
}

// popOldest takes the oldest waiter off the queue, or returns nil.
func (q *waitQueue[T]) popOldest() *waiter[T] {
	q.mu.Lock()
	w := q.popOldestLocked()
	q.mu.Unlock()
	return w
}

func (q *waitQueue[T]) popOldestLocked() *waiter[T] {
	w := q.head
	if w != nil {
		q.unlinkLocked(w)
	}
	return w
}

// failAll hands err to every waiter; with closeQueue set the queue also
// refuses new waiters from then on.
func (q *waitQueue[T]) failAll(err error, closeQueue bool) {
	q.mu.Lock()
	var list *waiter[T]
	for w := q.popOldestLocked(); w != nil; w = q.popOldestLocked() {
		w.next = list
		list = w
	}
	if closeQueue {
		q.closed = true
	}
	q.mu.Unlock()
	deliverErr(list, err)
}

// deliverErr hands err to each waiter of a list that a fail method took off
// the queue and linked through next, after q.mu is let go: each is owed
// exactly that one delivery.
func deliverErr[T any](list *waiter[T], err error) {
	for w := list; w != nil; {
		next := w.next
		w.next = nil
		w.ch <- handed[T]{err: err}
		w = next
	}
}

// failOlderThan hands err to every waiter that started waiting before
// cutoff (pool clock) and returns how many there were.
func (q *waitQueue[T]) failOlderThan(cutoff int64, err error) int {
	q.mu.Lock()
	var list *waiter[T]
	n := 0
	for q.head != nil && q.head.since < cutoff {
		w := q.popOldestLocked()
		w.next = list
		list = w
		n++
	}
	q.mu.Unlock()
	deliverErr(list, err)
	return n
}

// failDeadlinesBefore hands err to every waiter whose deadline comes before
// cutoff (pool clock) and returns how many there were.
func (q *waitQueue[T]) failDeadlinesBefore(cutoff int64, err error) int {
	q.mu.Lock()
	var list *waiter[T]
	n := 0
	for w := q.head; w != nil; {
		next := w.next
		if w.deadline < cutoff {
			q.unlinkLocked(w)
			w.next = list
			list = w
			n++
		}
		w = next
	}
	q.mu.Unlock()
	deliverErr(list, err)
	return n
}

// oldestSince returns the pool clock at which the oldest waiter started, and
// false when there is none.
func (q *waitQueue[T]) oldestSince() (int64, bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if q.head == nil {
		return 0, false
	}
	return q.head.since, true
}
