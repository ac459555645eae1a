package shoal

import "context"

// engine is one mode of the pool: where its connections are, how a free one
// is found, and how one comes back. The Pool keeps what both modes share
// (the limits and counts, dials, the wait queue, closes, counters,
// maintenance) and asks its engine for the rest, through this interface,
// chosen once in New; the engine calls down into what the Pool shares,
// never back into the Pool's own flow. exclusiveEngine (exclusive.go) hands
// each connection to one holder at a time from lock-free idle stacks;
// muxEngine (multiplexed.go) shares each connection between up to
// MaxStreams holders under one mutex.
//
// The plain fast path (Acquire, Pool.release) calls the exclusive engine
// directly, without the interface: a dynamic call there would cost a
// measurable share of an acquire.
type engine[T any] interface {
	// take returns a lease on a free connection that passed its checks,
	// or the zero Lease. Connections that fail a check close on the way.
	// wait says where the caller waits when it gets none: a multiplexed
	// engine may then leave a held-up connection (Config.Avoid) to a new
	// one the pool can open (muxEngine.take).
	take(ctx context.Context, wait waitPlace) Lease[T]
	// release takes back a lease whose holder released it (reason 0) or
	// that was discarded or reclaimed (reason set); the lease's held bit is
	// already cleared and the observer told.
	release(r *leaseRecord[T], reason Reason)
	// putBack gives a lease that nobody holds to the oldest waiter, or
	// back to the free connections. No hook runs.
	putBack(r *leaseRecord[T])
	// closeTaken closes (or, multiplexed, retires) the connection of a
	// lease taken for a caller that failed a check before the caller got
	// it.
	closeTaken(r *leaseRecord[T], reason Reason)
	// adopt takes a freshly dialled connection in, stops counting it in
	// capacity.dialing, and serves waiters from it.
	adopt(c *conn[T])
	// hijack ends l and forgets its connection without closing it, or
	// says why it cannot (ErrLeaseReleased, ErrHijackShared).
	hijack(l Lease[T]) error
	// retire stops c taking new leases; it closes once its last lease
	// ends, at once if it has none. ReasonRevoked is a Budget taking c's
	// permit back.
	retire(c *conn[T], reason Reason)
	// setStreamLimit changes how many leases c serves at once
	// (Lease.SetStreamLimit); exclusive connections serve one.
	setStreamLimit(c *conn[T], n int)
	// retireAll retires every connection (Pool.Reset): idle ones close
	// now, leased ones when their last lease ends.
	retireAll(reason Reason)
	// closeIdle closes every idle connection of a closed pool.
	closeIdle()
	// reap closes idle connections past MaxIdleTime (above MinIdle and
	// MinConns) or past their lifetime.
	reap(now int64)
	// checkIdle runs HealthCheck on the connections idle for
	// HealthCheckAfter (HealthCheckPeriod, exclusive connections only).
	checkIdle(now int64)
	// shrink closes idle connections above a lowered limit now and
	// arranges for the rest above it to close as their leases end.
	shrink()
	// takeIdle takes every idle connection for Pool.AcquireAllIdle.
	takeIdle() []Lease[T]
	// heldLeases returns the leases held now, for the leak scan.
	heldLeases() []*leaseRecord[T]
	// countWait records an acquire of c's that waited wait (pool clock).
	countWait(c *conn[T], wait int64)
	// count returns the leases held now, the connections with at least
	// one, and the live connections with none.
	count() (leases, inUse, idle int)
	// leased reports whether any lease is held now, stopping at the
	// first: a Group's idle sweep and eviction ask it of every pool, where
	// count and stats would walk every connection.
	leased() bool
	// stats fills the connection gauges and the wait counters of s, and
	// adds the hand-outs of the open connections' leases to s.Acquires.
	stats(s *Stats)
}

// waitPlace is where a caller that take gives no lease waits: nowhere (it
// returns at once), in the queue it is about to join (MaxWaiters leaves it
// room), or in the queue, where it has its place already and is counted
// among the waiters.
type waitPlace int8

const (
	noWait waitPlace = iota
	joinsQueue
	inQueue
)
