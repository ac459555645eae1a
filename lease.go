package shoal

import (
	"sync/atomic"
	"time"
)

// A Lease is the right to use one connection (or, in multiplexed mode, one
// stream slot on it) until Release or Discard.
//
// Leases are recycled so that Acquire allocates nothing: a Lease must not be
// used after its Release or Discard, just as a closed file must not be read.
// Calling Release or Discard a second time is safe and does nothing while
// the lease has not been handed out again; only the first call counts, so a
// connection is never returned twice.
type Lease[T any] struct {
	c *conn[T]

	// state holds the lease's hand-out generation above a held bit. The
	// generation counts the lease's hand-outs, which is how Stats counts
	// acquires without a shared counter on the hot path, and it lets the
	// leak reclaimer take back exactly the hand-out it judged, never the
	// next one.
	state atomic.Uint64
	slot  int32 // index in c.leases (multiplexed mode)

	// Set only when the pool tracks holding time (Observer, LeakThreshold,
	// load shedding): the pool clock at hand-out.
	acquiredAt atomic.Int64
	leak       *leakInfo // LeakThreshold only; set before the lease is first handed out
	reclaimed  atomic.Bool

	// handedAt is the pool clock at which a release handed this lease to
	// a waiter (exclusive mode, in a pool that does not barge), 0 when it
	// was taken from the idle stacks instead. Written only by whoever owns
	// the lease, before the hold that publishes it; the next hand-off
	// reads it to judge how long the lease was held (see
	// yieldAfterHandoff).
	handedAt int64
}

const heldBit = 1

// Value returns the connection.
func (l *Lease[T]) Value() T { return l.c.value }

// Release gives the connection back to the pool. It is kept for the next
// caller unless AfterRelease says no, its lifetime has passed, or the pool
// is closed.
func (l *Lease[T]) Release() {
	if l.unhold() {
		l.c.pool.release(l, 0)
	}
}

// Discard tells the pool the connection is broken: it is closed
// (ReasonDiscarded) and never handed out again. In multiplexed mode the
// connection takes no new leases and closes once its other leases end.
func (l *Lease[T]) Discard() {
	if l.unhold() {
		l.c.pool.release(l, ReasonDiscarded)
	}
}

// Err returns ErrLeaseReclaimed when the pool took the lease back because
// it was held past Config.LeakThreshold with Config.LeakReclaim set, and nil
// otherwise. After a reclaim the connection itself is closed, so using it
// fails too.
func (l *Lease[T]) Err() error {
	if l.reclaimed.Load() {
		return ErrLeaseReclaimed
	}
	return nil
}

// HeldFor returns how long the lease has been held, when the pool tracks it
// (an Observer or LeakThreshold is set), and 0 otherwise.
func (l *Lease[T]) HeldFor() time.Duration {
	at := l.acquiredAt.Load()
	if at == 0 || !l.isHeld() {
		return 0
	}
	return time.Duration(l.c.pool.now() - at)
}

// Retire stops the connection from taking new leases; it closes
// (ReasonRetired) when its last lease ends. Use it when the server asked
// the client to go away, as an HTTP/2 GOAWAY does. The lease itself stays
// valid until Release.
func (l *Lease[T]) Retire() {
	if l.isHeld() {
		l.c.pool.retire(l.c)
	}
}

// SetStreamLimit lowers (or restores, up to Config.MaxStreams) how many
// leases the connection serves at once, for a server that advertises its own
// limit. It has no effect in exclusive mode or with n < 1.
func (l *Lease[T]) SetStreamLimit(n int) {
	if l.isHeld() {
		l.c.pool.setStreamLimit(l.c, n)
	}
}

func (l *Lease[T]) isHeld() bool { return l.state.Load()&heldBit != 0 }

// unhold clears the held bit and reports whether this call did it: of any
// number of racing Release, Discard and reclaim calls, exactly one wins.
func (l *Lease[T]) unhold() bool {
	for {
		s := l.state.Load()
		if s&heldBit == 0 {
			return false
		}
		if l.state.CompareAndSwap(s, s&^heldBit) {
			return true
		}
	}
}

// free marks a lease that nobody holds (its connection is idle or closing).
// Only the goroutine that owns the lease at that moment calls it.
// A lease released by its holder is free already: no store then.
func (l *Lease[T]) free() {
	if s := l.state.Load(); s&heldBit != 0 {
		l.state.Store(s &^ heldBit)
	}
}

// handouts returns how many times the lease has been handed out.
func (l *Lease[T]) handouts() int64 { return int64(l.state.Load() >> 1) }

// holdPlain is hold for a pool that tracks nothing about holding.
func (l *Lease[T]) holdPlain() { l.state.Store(l.state.Load() | heldBit + 2) }

// hold marks l handed out, starting a new generation. Only the goroutine
// that owns the lease at that moment calls it (it popped the connection, or
// holds the multiplexed set's lock).
func (p *Pool[T]) hold(l *Lease[T]) {
	if p.trackHeld {
		l.acquiredAt.Store(p.now())
	}
	l.state.Store(l.state.Load() | heldBit + 2) // next generation, held
}
