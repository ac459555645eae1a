package shoal

import "sync/atomic"

// conn is one open connection and the pool's bookkeeping for it.
type conn[T any] struct {
	value T
	pool  *Pool[T]

	slot int32 // its number in the exclusive engine's slot table; fixed for the conn's life
	part int32 // home partition, where it rests when idle (exclusive mode)
	// excess: claimExcess counted this connection's close as one the
	// pool's limit asked for (capacity.go).
	excess bool
	// gen is lifecycle.resets as its dial began to connect: a Reset since
	// closes it as it lands (Pool.dialledBeforeReset).
	gen       uint32
	createdAt int64 // pool clock
	expiresAt int64 // pool clock; 0 = no lifetime

	// permit is the Budget's leave to keep this connection open, given
	// back once it is closed; nil without a Budget.
	permit BudgetPermit

	// idleSince is the pool clock at the last release (or adoption) when
	// some feature needs it (MaxIdleTime, HealthCheck); 0 otherwise.
	idleSince atomic.Int64

	// Exclusive mode: the one lease, handed out again and again, so that
	// acquiring allocates nothing. Its held bit doubles as the conn's
	// state: held means leased, not held means idle (or being checked).
	lease leaseRecord[T]

	// retired is the reason the connection takes no new leases and closes
	// once its last lease ends (Lease.Retire, Pool.Reset, a lifetime, a
	// shrink), 0 while it serves. Exclusive mode reads it on release;
	// multiplexed mode sets it under its engine's lock.
	retired atomic.Int32

	// mux is the connection's streams in multiplexed mode (multiplexed.go);
	// nil in exclusive mode.
	mux *muxConn[T]
}

// handouts returns how many times the connection's leases were handed out.
// Only for multiplexed connections does this read more than one lease; their
// lease slice is fixed once the connection is adopted.
func (c *conn[T]) handouts() int64 {
	if c.mux == nil {
		return c.lease.handouts()
	}
	var n int64
	for i := range c.mux.leases {
		n += c.mux.leases[i].handouts()
	}
	return n
}

// retire marks the connection retired for reason, unless it is already.
func (c *conn[T]) retire(reason Reason) { c.retired.CompareAndSwap(0, int32(reason)) }

// retiredFor returns why the connection retired, or 0.
func (c *conn[T]) retiredFor() Reason { return Reason(c.retired.Load()) }

// idleFor reports how long the connection has been idle at now, or 0 when
// the pool does not track idleness.
func (c *conn[T]) idleFor(now int64) int64 {
	since := c.idleSince.Load()
	if since == 0 {
		return 0
	}
	return now - since
}

// expired reports whether the connection has outlived its lifetime at now.
func (c *conn[T]) expired(now int64) bool {
	return c.expiresAt != 0 && now >= c.expiresAt
}
