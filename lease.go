package shoal

import (
	"sync/atomic"
	"time"
)

// A Lease is the right to use one connection (or, in multiplexed mode, one
// of its streams) until Release, Discard or Hijack.
//
// A Lease is a small value: the connection's own lease record and the
// hand-out it stands for. Acquire allocates nothing to make one, and a
// Lease outlives its hand-out harmlessly: once it has been released (or
// reclaimed), Release and Discard do nothing and Hijack returns
// ErrLeaseReleased, even after the connection went to a new holder, whose
// lease is a different hand-out. Copies of a Lease are the same lease.
// The zero Lease holds nothing.
type Lease[T any] struct {
	rec *leaseRecord[T]
	gen uint64 // rec.state as the hand-out left it: its generation, held
}

// leaseRecord is the pool's record of a connection's lease (of one
// stream's, in multiplexed mode), kept in the connection so that handing it
// out allocates nothing. Each hand-out starts a generation; a Lease carries
// the one it was handed.
type leaseRecord[T any] struct {
	c *conn[T]

	// state holds the hand-out generation above a held bit. The generation
	// counts hand-outs, which is how Stats counts acquires without a shared
	// counter on the hot path; it tells a Lease still held from a stale copy
	// of an earlier hand-out, and lets the leak reclaimer take back exactly
	// the hand-out it judged, never the next one.
	state  atomic.Uint64
	stream int32 // its index in c.mux.leases (multiplexed mode)

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

// Value returns the connection. On a released Lease it still returns the
// connection, which is by then someone else's or closed: like a closed
// file, it must not be used.
func (l Lease[T]) Value() T {
	if l.rec == nil {
		var zero T
		return zero
	}
	return l.rec.c.value
}

// Release gives the connection back to the pool. It is kept for the next
// caller unless AfterRelease says no, its lifetime has passed, or the pool
// is closed. Only the first Release or Discard of a hand-out counts; later
// ones do nothing.
func (l Lease[T]) Release() {
	if l.end() {
		l.rec.c.pool.release(l.rec, 0)
	}
}

// Discard tells the pool the connection is broken: it is closed
// (ReasonDiscarded), in the background, and never handed out again. In
// multiplexed mode the connection takes no new leases and closes once its
// other leases end. On a Lease already released it does nothing.
func (l Lease[T]) Discard() {
	if l.end() {
		l.rec.c.pool.release(l.rec, ReasonDiscarded)
	}
}

// DiscardFor is Discard for a connection that an adapter's own check found
// unusable, with the reason to report in logs, the Observer and OnDisconnect:
// ReasonHealth (a ping before handing it out failed) or ReasonRejected (a
// hook of the adapter's said no). Any other reason reads as ReasonDiscarded:
// the pool's own reasons carry accounting of their own.
func (l Lease[T]) DiscardFor(reason Reason) {
	if reason != ReasonHealth && reason != ReasonRejected {
		reason = ReasonDiscarded
	}
	if l.end() {
		l.rec.c.pool.release(l.rec, reason)
	}
}

// Err returns ErrLeaseReclaimed when the pool took the lease back because
// it was held past Config.LeakThreshold with Config.LeakReclaim set, and nil
// otherwise. After a reclaim the connection itself is closed, so using it
// fails too.
func (l Lease[T]) Err() error {
	if l.rec != nil && l.rec.reclaimed.Load() {
		return ErrLeaseReclaimed
	}
	return nil
}

// HeldFor returns how long the lease has been held, when the pool tracks it
// (an Observer or LeakThreshold is set), and 0 otherwise or once released.
func (l Lease[T]) HeldFor() time.Duration {
	if !l.held() {
		return 0
	}
	at := l.rec.acquiredAt.Load()
	if at == 0 {
		return 0
	}
	return time.Duration(l.rec.c.pool.now() - at)
}

// Retire stops the connection from taking new leases; it closes
// (ReasonRetired) when its last lease ends. Use it when the server asked
// the client to go away, as an HTTP/2 GOAWAY does. The lease itself stays
// valid until Release. On a released Lease it does nothing.
func (l Lease[T]) Retire() {
	if l.held() {
		l.rec.c.pool.eng.retire(l.rec.c, ReasonRetired)
	}
}

// SetStreamLimit lowers (or restores, up to Config.MaxStreams) how many
// leases the connection serves at once, for a server that advertises its own
// limit. It has no effect in exclusive mode, with n < 1, or on a released
// Lease.
func (l Lease[T]) SetStreamLimit(n int) {
	if l.held() {
		l.rec.c.pool.eng.setStreamLimit(l.rec.c, n)
	}
}

// Hijack takes the connection out of the pool for good: the pool forgets it
// (its place in MaxConns is free again, and its Config.Budget permit goes
// back to the budget, which counts it no more) without closing it, and
// neither Config.Close nor OnDisconnect is called: closing it is now the
// caller's job. The lease is over, as after Release. A multiplexed connection can be
// hijacked only by its one remaining lease; otherwise Hijack returns
// ErrHijackShared and the lease stays as it was. On a lease already
// released it returns ErrLeaseReleased.
func (l Lease[T]) Hijack() (T, error) {
	var zero T
	if l.rec == nil {
		return zero, ErrLeaseReleased
	}
	c := l.rec.c
	p := c.pool
	held := l.HeldFor() // before the lease ends, after which it reads 0
	if err := p.eng.hijack(l); err != nil {
		return zero, err
	}
	if p.obs != nil {
		p.obs.ObserveRelease(held)
	}
	p.counters.closedHandouts.Add(c.handouts())
	p.cap.up.Add(-1)
	// The pool will never close it, and a close (closeDone) is where a
	// permit goes back otherwise: kept, it would be out for good. Before
	// the place, as there, so a dial the place lets start finds it.
	if c.permit != nil {
		c.permit.Release()
	}
	p.cap.open.Add(-1)
	p.capacityFreed()
	return c.value, nil
}

// held reports whether l's hand-out is still the current one and held.
func (l Lease[T]) held() bool { return l.rec != nil && l.rec.state.Load() == l.gen }

// end clears the held bit of l's hand-out and reports whether this call did
// it: of any number of racing Release, Discard, Hijack and reclaim calls on
// one hand-out exactly one wins, and a call on an earlier hand-out never
// does, since the generation it carries is no longer the state's.
func (l Lease[T]) end() bool {
	return l.rec != nil && l.rec.state.CompareAndSwap(l.gen, l.gen&^heldBit)
}

func (r *leaseRecord[T]) isHeld() bool { return r.state.Load()&heldBit != 0 }

// free marks a lease that nobody holds (its connection is idle or closing).
// Only the goroutine that owns the lease at that moment calls it.
// A lease released by its holder is free already: no store then.
func (r *leaseRecord[T]) free() {
	if s := r.state.Load(); s&heldBit != 0 {
		r.state.Store(s &^ heldBit)
	}
}

// handouts returns how many times the lease has been handed out.
func (r *leaseRecord[T]) handouts() int64 { return int64(r.state.Load() >> 1) }

// holdPlain is hold for a pool that tracks nothing about holding.
func (r *leaseRecord[T]) holdPlain() Lease[T] {
	s := r.state.Load() | heldBit + 2
	r.state.Store(s)
	return Lease[T]{rec: r, gen: s}
}

// hold marks l handed out, starting a new generation, and returns the Lease
// for that hand-out. Only the goroutine that owns the lease at that moment
// calls it (it popped the connection, or holds the multiplexed engine's lock).
func (p *Pool[T]) hold(r *leaseRecord[T]) Lease[T] {
	if p.feat.trackHeld {
		r.acquiredAt.Store(p.now())
	}
	s := r.state.Load() | heldBit + 2 // next generation, held
	r.state.Store(s)
	return Lease[T]{rec: r, gen: s}
}
