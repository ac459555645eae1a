package shoal

import "context"

// engine is one mode of the pool: what it does with the connections it
// holds. The Pool keeps what both modes share (the limits, dials, the wait
// queue, closes, counters, maintenance) and calls its engine for the rest,
// through this interface: no Pool or Lease method asks which mode it is in.
// exclusiveEngine (exclusive.go)
// hands each connection to one holder at a time from lock-free idle stacks;
// muxEngine (multiplexed.go) shares each connection between up to
// MaxStreams holders under one mutex.
//
// The plain fast path (acquire.go, release.go) calls the exclusive engine's
// stacks directly, without the interface: a dynamic call there would cost
// a measurable share of an acquire. So do the exclusive engine's helpers
// that work with the wait queue and barging, and live beside them
// (repoolOrBarge, pushIdle and serveWaiters in release.go, shrinkIdle in
// resize.go, checkIdle in idlecheck.go): they run in exclusive mode only.
type engine[T any] interface {
	// take returns a lease on a free connection that passed its checks,
	// or the zero Lease. Connections that fail a check close on the way.
	take(ctx context.Context) Lease[T]
	// release takes back a lease whose holder released it (reason 0) or
	// that was discarded or reclaimed (reason set); the lease's held bit is
	// already cleared and the observer told.
	release(l *leaseState[T], reason Reason)
	// repool gives a lease that nobody holds to the oldest waiter, or back
	// to the free connections. No hook runs.
	repool(l *leaseState[T])
	// drop closes (or, multiplexed, retires) the connection of a lease
	// taken for a caller that failed a check before the caller got it.
	drop(l *leaseState[T], reason Reason)
	// adopt takes a freshly dialled connection in, stops counting it in
	// Pool.dialing, and serves waiters from it.
	adopt(c *conn[T])
	// hijack ends l and forgets its connection without closing it, or
	// says why it cannot (ErrLeaseReleased, ErrHijackShared).
	hijack(l Lease[T]) error
	// retire stops c taking new leases; it closes when its last ends.
	retire(c *conn[T], reason Reason)
	// setStreamLimit changes how many leases c serves at once
	// (Lease.SetStreamLimit); exclusive connections serve one.
	setStreamLimit(c *conn[T], n int)
	// revoke closes c once no lease holds it (a budget took its permit).
	revoke(c *conn[T])
	// retireAll retires every connection (Pool.Reset): idle ones close
	// now, leased ones when their last lease ends.
	retireAll(reason Reason)
	// closeIdle closes every idle connection of a closed pool.
	closeIdle()
	// reap closes idle connections past MaxIdleTime (above MinIdle and
	// MinConns) or past their lifetime.
	reap(now int64)
	// shrink closes idle connections above a lowered limit now and
	// arranges for the rest above it to close as their leases end.
	shrink()
	// takeIdle takes every idle connection for Pool.AcquireAllIdle.
	takeIdle() []Lease[T]
	// heldLeases returns the leases held now, for the leak scan.
	heldLeases() []*leaseState[T]
	// count returns the leases held now, the connections with at least
	// one, and the live connections with none.
	count() (leases, inUse, idle int)
	// stats fills the connection gauges of s and adds the hand-outs of
	// the open connections' leases to s.Acquires.
	stats(s *Stats)
}
