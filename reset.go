package shoal

// Reset closes every idle connection now and every leased one when its
// lease ends (ReasonReset), so that the pool starts afresh: after a
// failover, a credential rotation, a schema change. Connections dialled
// after Reset are kept; the pool stays open and MinIdle refills.
func (p *Pool[T]) Reset() {
	p.eng.retireAll(ReasonReset)
	p.kickMaintenance()
}
