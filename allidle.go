package shoal

// AcquireAllIdle takes every idle connection at once and returns a lease on
// each, for work done on the whole pool's idle connections from outside it:
// keep-alive queries, a check of every session (pgxpool has the same). It
// never waits and never dials. No health check or BeforeAcquire runs; a
// connection past its lifetime is closed instead of returned. The leases
// count as acquires that did not wait. Release or Discard each one. A
// multiplexed or closed pool returns nil.
func (p *Pool[T]) AcquireAllIdle() []Lease[T] {
	if p.closed.Load() {
		return nil
	}
	return p.eng.takeIdle()
}
