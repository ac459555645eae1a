package shoal

// Reset closes every idle connection now and every leased one when its
// lease ends (ReasonReset), so that the pool starts afresh: after a
// failover, a credential rotation, a schema change. A connection whose
// dial was under way at Reset closes as it lands, handed to nobody: it
// may have reached the server the pool is leaving. Connections whose
// dials start after Reset are kept; the pool stays open and MinIdle
// refills.
func (p *Pool[T]) Reset() {
	// Counted before the sweep: a dial that lands after the sweep missed
	// it sees the count (the engines' adopt).
	p.life.resets.Add(1)
	p.eng.retireAll(ReasonReset)
	p.kickMaintenance()
}

// dialledBeforeReset reports whether c's dial was under way at a Reset.
// An engine asks once c is among its connections, where the Reset's sweep
// would find it: either that sweep comes after the look and retires c, or
// the look comes after the Reset's count and sees it.
func (p *Pool[T]) dialledBeforeReset(c *conn[T]) bool {
	return c.gen != p.life.resets.Load()
}
