package shoal

import (
	"runtime"
	"time"
)

// release takes back a lease whose holder called Release (reason 0) or
// Discard (ReasonDiscarded), or that the leak reclaimer took back
// (ReasonLeaked). The lease's held bit is already cleared.
func (p *Pool[T]) release(l *leaseState[T], reason Reason) {
	if p.plain && reason == 0 {
		// Nothing to run or record: only the pool's and the
		// connection's own reasons to close it.
		c := l.c
		switch {
		case p.closed.Load():
			p.closeConn(c, ReasonPoolClosed)
		case c.retired.Load() != 0:
			p.closeConn(c, Reason(c.retired.Load()))
		default:
			p.repoolOrBarge(l)
		}
		return
	}
	if p.obs != nil {
		p.obs.ObserveRelease(time.Duration(p.now() - l.acquiredAt.Load()))
	}
	p.eng.release(l, reason)
}

// repoolOrBarge is repool for a lease that its holder released. With
// barging on and the oldest waiter younger than the window, the connection
// goes on the idle stack for whoever asks next, stamped with the time, so
// that the timer can tell how long it sat there. Everything else that puts
// a connection back (a new one from a dial, a lease a leaving waiter passes
// on) calls repool: those were meant for a waiter already.
func (p *Pool[T]) repoolOrBarge(l *leaseState[T]) {
	if p.barge == nil || p.waiters.Load() == 0 {
		p.ex.repool(l)
		return
	}
	now := p.now()
	if p.bargeOffAt(now) {
		p.ex.repool(l)
		return
	}
	if p.over.Load() {
		p.ex.repool(l) // which closes it if the pool is still above its limit
		return
	}
	l.c.idleSince.Store(now)
	p.pushIdle(l, true)
}

// pushIdle puts the connection of a lease that nobody holds on its
// partition's idle stack, then serves a waiter that may have missed it; with
// barging set (barge.go) a young waiter is left to the barging timer.
func (p *Pool[T]) pushIdle(l *leaseState[T], barging bool) {
	c := l.c
	if p.barge != nil && !barging && !p.clockOnIdle {
		// The barging timer reads it to tell a miss (barge.go). A
		// barging release stamped it already, and so does every
		// release in a pool that tracks idleness.
		c.idleSince.Store(p.now())
	}
	p.ex.push(c)

	// A waiter may have enqueued after our look at p.waiters but before
	// the push, and looked at the stack before the push too. Every waiter
	// enqueues before its last look at the stacks and we pushed before this
	// second look at p.waiters, so one of the two sides sees the other.
	if p.waiters.Load() > 0 {
		if barging && !p.bargeOffAt(p.now()) {
			p.barge.arm()
		} else {
			p.serveWaiters(nil)
		}
	}
	// Close empties the stacks once, after it sets closed; a push that
	// raced with it is caught here.
	if p.closed.Load() {
		p.ex.closeIdle()
	}
}

// serveWaiters hands idle connections to the oldest waiters while there
// are both, calling seen (when not nil) with each connection it pops for a
// waiter.
func (p *Pool[T]) serveWaiters(seen func(c *conn[T])) {
	for p.waiters.Load() > 0 {
		c := p.ex.popIdle()
		if c == nil {
			return
		}
		if seen != nil {
			seen(c)
		}
		if !p.handoff(&c.lease) {
			// The queue emptied after our look at p.waiters. Back on the
			// stack, and look again: a waiter that enqueued since may have
			// looked at the stacks before this push.
			p.ex.push(c)
			// Close may have emptied the stacks (and failed the waiters)
			// between our pop and this push, as in pushIdle.
			if p.closed.Load() {
				p.ex.closeIdle()
				return
			}
		}
	}
}

// handoff gives l to the oldest waiter and reports whether there was one.
func (p *Pool[T]) handoff(l *leaseState[T]) bool {
	w := p.wq.popOldest()
	if w == nil {
		return false
	}
	yield := p.yieldAfterHandoff(l)
	w.ch <- handed[T]{lease: p.hold(l)}
	if yield {
		runtime.Gosched()
	}
	return true
}

// yieldHeldUnder: a lease held for less than this did no network round
// trip (one over loopback takes 10 us or more) and its holder was busy on
// the CPU only. See yieldAfterHandoff.
const yieldHeldUnder = 5 * time.Microsecond

// yieldAfterHandoff stamps l as handed over now and says whether the
// releaser should yield its processor to the waiter it is handing l to.
//
// After CPU work alone the yield keeps a crowd from forming a convoy, in
// which the releaser, about to acquire again, finds nothing idle and parks.
// After a network round trip it costs throughput: runtime.Gosched puts the
// releaser on the global run queue, served last, and wakes no idle processor.
// The two are told apart by how long the lease was held since its own
// hand-over (yieldHeldUnder); a lease taken from the idle stacks has no stamp
// and yields. A barging pool always yields: its hand-offs are the exception.
// Figures in BENCHMARKS.md ("The releaser's yield").
func (p *Pool[T]) yieldAfterHandoff(l *leaseState[T]) bool {
	if p.barge != nil {
		return true // no stamp needed: no clock read on this path
	}
	now := p.now()
	prev := l.handedAt
	l.handedAt = now
	return prev == 0 || now-prev < int64(yieldHeldUnder)
}

// dropTaken closes the connection of a lease that was taken for a caller but
// failed a check before the caller got it.
func (p *Pool[T]) dropTaken(l *leaseState[T], reason Reason) {
	p.counters.unused.Add(1)
	l.free()
	p.eng.drop(l, reason)
}

// closeConn closes a connection that nobody else can reach any more (it is
// off the idle stacks and its lease is not held) and frees its place.
func (p *Pool[T]) closeConn(c *conn[T], reason Reason) {
	p.ex.slots.forget(c)
	p.disconnect(c, reason)
}

// disconnect runs the hooks and Close for a connection already forgotten by
// the pool's structures, then gives its place in MaxConns back. With a hook
// or a Close to run, it does that on a goroutine of its own: a Close can
// take as long as the network lets it (a stalled peer, a server slow to
// acknowledge), and the goroutine that let the connection go (a caller's
// Release or Discard, an acquire whose check failed, maintenance, Close)
// must not wait for it. The place in MaxConns, and a budget's permit, stay
// taken until Close has returned, so the server never sees more
// connections than the limit, and Pool.Close waits for these closes too.
func (p *Pool[T]) disconnect(c *conn[T], reason Reason) {
	// Now, while the connection has just left the pool's structures, so
	// that Stats.Acquires never misses its hand-outs for the whole close.
	p.counters.closedHandouts.Add(c.handouts())
	if p.cfg.Hooks.OnDisconnect == nil && p.cfg.Close == nil {
		p.forgetClosed(c, reason, false)
		return
	}
	p.closing.Add(1)
	go func() {
		if p.cfg.Hooks.OnDisconnect != nil {
			p.callOnDisconnect(c, reason)
		}
		if p.cfg.Close != nil {
			if err := p.callClose(c); err != nil {
				p.logConnError("close failed", c, err)
			}
		}
		p.forgetClosed(c, reason, true)
	}()
}

// forgetClosed accounts for a closed connection: counters, log, observer,
// its permit and its place in MaxConns; async says disconnect counted it in
// Pool.closing. That count and the place go together, before anything that
// may let Close return, so that a drained pool has no close left running.
func (p *Pool[T]) forgetClosed(c *conn[T], reason Reason, async bool) {
	p.logClosed(c, reason)
	if p.obs != nil {
		p.obs.ObserveClose(reason)
	}
	if c.permit != nil {
		c.permit.Release()
	}
	p.counters.closed.Add(1)
	if async {
		// Before the place: open minus closing may read one high for a
		// moment (nobody fails waiters for it), never one low.
		p.closing.Add(-1)
	}
	if reason == ReasonResized && p.countsExcess {
		p.closedForLimit()
	} else {
		p.open.Add(-1)
	}
	p.capacityFreed()
}

// capacityFreed runs after a place in MaxConns became free.
func (p *Pool[T]) capacityFreed() {
	if p.closed.Load() {
		p.checkDrained()
		return
	}
	if p.waiters.Load() > p.dialing.Load() {
		p.maybeDial()
	}
	if p.keepsFloor() {
		p.kickMaintenance()
	}
}
