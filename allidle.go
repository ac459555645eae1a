package shoal

import "context"

// AcquireAllIdle takes every idle connection at once and returns a lease on
// each, for work done on the whole pool's idle connections from outside it:
// keep-alive queries, a check of every session (pgxpool has the same). It
// never waits and never dials. No health check or BeforeAcquire runs; a
// connection past its lifetime is closed instead of returned. The leases
// count as acquires that did not wait. Release or Discard each one. A
// multiplexed or closed pool returns nil.
func (p *Pool[T]) AcquireAllIdle() []Lease[T] {
	if p.hot.closed.Load() {
		return nil
	}
	return p.eng.takeIdle()
}

// TryAcquireIdle returns a lease on an idle connection if one is free now,
// and ErrWouldBlock otherwise. Unlike TryAcquire it never starts a dial: it
// is for work done from outside the pool on one of its idle connections
// now and then (shoalpgx's look at the server's role), which must not make
// the pool grow. The checks of an acquire run; the lease counts as an
// acquire that did not wait.
func (p *Pool[T]) TryAcquireIdle() (Lease[T], error) {
	if p.hot.closed.Load() {
		return Lease[T]{}, ErrClosed
	}
	if l := p.eng.take(context.Background(), noWait); l.rec != nil {
		return p.acquired(l, 0, false), nil
	}
	return Lease[T]{}, ErrWouldBlock
}
