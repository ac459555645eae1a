package shoal

import (
	"context"
	"time"
)

// AcquireSince is Acquire for a caller that began waiting for a connection
// at since, before it could ask the pool: one that waited for something
// the pool depends on, such as shoalhttp's requests that wait for an
// origin's first connection, which decides the protocol and so the pool.
// Its wait counts from since, in Stats (WaitedAcquires, WaitTime), for the
// Observer (ObserveAcquire, ObserveTimeout), for a WaitTracer, whose span
// starts at since, and in the Waited of the AcquireError of a context that
// ended, even when a connection is free at once; its place in the wait
// queue does not. A since that is zero or not in the past makes it Acquire.
func (p *Pool[T]) AcquireSince(ctx context.Context, since time.Time) (Lease[T], error) {
	pre := int64(time.Since(since))
	if since.IsZero() || pre <= 0 {
		return p.Acquire(ctx)
	}
	if p.hot.closed.Load() {
		return Lease[T]{}, ErrClosed
	}
	if p.ex.barge != nil && p.ex.shortOfTime(ctx) {
		return p.acquireInTurn(ctx, pre)
	}
	// No fast path: a caller that waited already is not the common case,
	// and the slow path is where the wait is recorded.
	return p.acquireSlow(ctx, pre)
}
