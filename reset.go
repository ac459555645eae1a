package shoal

// Reset closes every idle connection now and every leased one when its
// lease ends (ReasonReset), so that the pool starts afresh: after a
// failover, a credential rotation, a schema change. Connections dialled
// after Reset are kept; the pool stays open and MinIdle refills.
func (p *Pool[T]) Reset() {
	if p.multiplexed {
		p.mx.retireAll(ReasonReset)
		p.kickMaintenance()
		return
	}
	p.ex.slots.each(func(c *conn[T]) bool {
		c.retired.CompareAndSwap(0, int32(ReasonReset))
		return true
	})
	// The idle ones: off the stacks and closed. Those dialled since Reset
	// marked the others go back.
	for i := range p.ex.parts {
		p.sweepPartition(i, func(c *conn[T]) Reason { return Reason(c.retired.Load()) })
	}
	p.kickMaintenance()
}
