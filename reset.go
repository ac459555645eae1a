package shoal

import "errors"

// Reset closes every idle connection now and every leased one when its
// lease ends (ReasonReset), so that the pool starts afresh: after a
// failover, a credential rotation, a schema change. Connections dialled
// after Reset are kept; the pool stays open and MinIdle refills.
func (p *Pool[T]) Reset() {
	if p.multiplexed {
		p.muxRetireAll(ReasonReset)
		p.kickMaintenance()
		return
	}
	p.slots.each(func(c *conn[T]) bool {
		c.retired.CompareAndSwap(0, int32(ReasonReset))
		return true
	})
	// The idle ones: off the stacks and closed. Those dialled since Reset
	// marked the others go back.
	for i := range p.parts {
		p.sweepPartition(i, func(c *conn[T]) Reason { return Reason(c.retired.Load()) })
	}
	p.kickMaintenance()
}

// ErrHijackShared: Hijack was called on a multiplexed connection that other
// leases still use.
var ErrHijackShared = errors.New("shoal: cannot hijack a connection other leases still use")

// Hijack takes the connection out of the pool for good: the pool forgets it
// (its place in MaxConns is free again) without closing it, and neither
// Config.Close nor OnDisconnect is called: closing it is now the caller's
// job. The lease is over, as after Release. A multiplexed connection can be
// hijacked only by its one remaining lease; otherwise Hijack returns
// ErrHijackShared and the lease stays as it was. On a lease already
// released it returns ErrLeaseReleased.
func (l Lease[T]) Hijack() (T, error) {
	var zero T
	if l.s == nil {
		return zero, ErrLeaseReleased
	}
	c := l.s.c
	p := c.pool
	held := l.HeldFor() // before the lease ends, after which it reads 0
	if p.multiplexed {
		p.mux.mu.Lock()
		if !l.held() {
			p.mux.mu.Unlock()
			return zero, ErrLeaseReleased
		}
		if c.streams != 1 || !l.end() {
			p.mux.mu.Unlock()
			return zero, ErrHijackShared
		}
		c.streams = 0
		c.free = append(c.free, l.s.slot)
		p.mux.removeConnLocked(c)
		p.mux.mu.Unlock()
	} else {
		if !l.end() {
			return zero, ErrLeaseReleased
		}
		p.forgetSlot(c)
	}
	if p.obs != nil {
		p.obs.ObserveRelease(held)
	}
	p.counters.closedHandouts.Add(c.handouts())
	p.open.Add(-1)
	p.capacityFreed()
	return c.value, nil
}
