package shoal

import "sync/atomic"

// A Lease is the right to use one connection (or, in multiplexed mode, one
// stream slot on it) until Release or Discard.
//
// Leases are recycled so that Acquire allocates nothing: a Lease must not be
// used after its Release or Discard, just as a closed file must not be read.
// Calling Release or Discard a second time is safe and does nothing while
// the lease has not been handed out again; only the first call counts, so a
// connection is never returned twice.
type Lease[T any] struct {
	c    *conn[T]
	held atomic.Bool
	slot int32 // index in c.leases (multiplexed mode)
}

// Value returns the connection.
func (l *Lease[T]) Value() T { return l.c.value }

// Release gives the connection back to the pool. It is kept for the next
// caller unless AfterRelease says no, its lifetime has passed, or the pool
// is closed.
func (l *Lease[T]) Release() {
	if l.held.CompareAndSwap(true, false) {
		l.c.pool.release(l, false)
	}
}

// Discard tells the pool the connection is broken: it is closed
// (ReasonDiscarded) and never handed out again. In multiplexed mode the
// connection takes no new leases and closes once its other leases end.
func (l *Lease[T]) Discard() {
	if l.held.CompareAndSwap(true, false) {
		l.c.pool.release(l, true)
	}
}

// Retire stops the connection from taking new leases; it closes
// (ReasonRetired) when its last lease ends. Use it when the server asked
// the client to go away, as an HTTP/2 GOAWAY does. The lease itself stays
// valid until Release.
func (l *Lease[T]) Retire() {
	if l.held.Load() {
		l.c.pool.retire(l.c)
	}
}

// SetStreamLimit lowers (or restores, up to Config.MaxStreams) how many
// leases the connection serves at once, for a server that advertises its own
// limit. It has no effect in exclusive mode or with n < 1.
func (l *Lease[T]) SetStreamLimit(n int) {
	if l.held.Load() {
		l.c.pool.setStreamLimit(l.c, n)
	}
}
