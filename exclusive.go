package shoal

import (
	"context"
	"runtime"
	"sync/atomic"
	"time"
	"unsafe"
)

// exclusiveEngine is the exclusive mode (MaxStreams of 0 or 1): each
// connection handed to one holder at a time. It owns the open connections,
// numbered in a slot table, the idle ones on lock-free stacks in partitions,
// and barging; nothing outside its files (this one, exclusive_upkeep.go and
// barge.go) touches them. Its hot paths take no lock and allocate nothing.
//
// What it uses of the Pool it reads or calls down into: the features, the
// clock, the wait queue (to hand a connection to a waiter), capacity (a
// close the limit asks for) and the closer (Pool.closeConn).
type exclusiveEngine[T any] struct {
	p        *Pool[T]
	parts    []partition[T] // idle stacks, one per partition
	barge    *barger        // nil without BargeWindow (barge.go)
	slots    slotTable[T]   // open connections, by slot
	nextPart atomic.Uint32  // round-robin home partition for new conns
}

// init sets the engine up for p, whose features are derived.
func (e *exclusiveEngine[T]) init(p *Pool[T]) {
	e.p = p
	e.parts = make([]partition[T], p.feat.partitions)
	if p.cfg.BargeWindow > 0 {
		e.barge = newBarger(p.cfg.BargeWindow, e.bargeTimerFired)
	}
}

// popIdle pops an idle connection, trying the caller's home partition first
// and then stealing from the others, or returns nil.
func (e *exclusiveEngine[T]) popIdle() *conn[T] {
	n := uint32(len(e.parts))
	home := uint32(0)
	if n > 1 {
		home = homePartition(n)
	}
	for i := uint32(0); i < n; i++ {
		part := &e.parts[(home+i)%n]
		if part.idle.empty() {
			continue
		}
		if c := part.idle.pop(&e.slots); c != nil {
			return c
		}
	}
	return nil
}

// homePartition picks the caller's home partition in [0, n) from the
// address of a variable on its stack. Each goroutine has its own stack, so
// goroutines spread over the partitions, and one goroutine keeps coming
// back to the same partition (until its stack moves), which keeps the lines
// it touches in its core's cache. It costs a multiplication, where a random
// draw costs a good part of an uncontended acquire+release (BENCHMARKS.md,
// "The home partition") and any shared counter would be contended.
func homePartition(n uint32) uint32 {
	var marker byte
	addr := uint64(uintptr(unsafe.Pointer(&marker)))
	// Stacks are at least 2KiB apart: drop the bits within one, then
	// Fibonacci-hash the rest so neighbouring stacks land far apart.
	h := (addr >> 11) * 0x9E3779B97F4A7C15
	return uint32((h >> 32) * uint64(n) >> 32) // [0, n) without a division
}

// push puts c, which nobody holds, on its home partition's idle stack.
// A retire (Reset, a revoke) that marked c while it was off the stacks
// swept them without it; read after the push, the mark catches that sweep
// having come before the push, and closes c rather than leave it idle.
func (e *exclusiveEngine[T]) push(c *conn[T]) {
	c.lease.free()
	e.parts[c.part].idle.push(&e.slots, c.slot)
	if c.retiredFor() != 0 {
		e.sweep(int(c.part), (*conn[T]).retiredFor)
	}
}

// take pops idle connections, home partition first, until one passes its
// checks. Whether the caller can wait changes nothing here.
func (e *exclusiveEngine[T]) take(ctx context.Context, _ waitPlace) Lease[T] {
	p := e.p
	for {
		c := e.popIdle()
		if c == nil {
			return Lease[T]{}
		}
		if p.feat.checkOnTake {
			if reason, ok := p.check(ctx, c, true, 0); !ok {
				if callerGone(ctx, reason) {
					// The check failed because the caller's context ended
					// (a ping cannot run without time), which says nothing
					// of the connection: keep it, and stop here rather than
					// fail every idle connection's check in turn.
					e.putBack(&c.lease)
					return Lease[T]{}
				}
				e.close(c, reason)
				continue
			}
		}
		c.lease.handedAt = 0
		return p.hold(&c.lease)
	}
}

// release closes the connection for a reason (its holder's, AfterRelease's,
// the pool's or its own) or puts it back.
func (e *exclusiveEngine[T]) release(r *leaseRecord[T], reason Reason) {
	p, c := e.p, r.c
	if reason != 0 {
		e.close(c, reason)
		return
	}
	if p.cfg.Hooks.AfterRelease != nil && !p.callAfterRelease(c) {
		e.close(c, ReasonRejected)
		return
	}
	if p.hot.closed.Load() {
		e.close(c, ReasonPoolClosed)
		return
	}
	if why := c.retiredFor(); why != 0 {
		e.close(c, why)
		return
	}
	if c.expiresAt != 0 || p.feat.clockOnIdle {
		now := p.now()
		if c.expired(now) {
			e.close(c, ReasonLifetime)
			return
		}
		if p.feat.clockOnIdle {
			c.idleSince.Store(now)
		}
	}
	e.putBackReleased(r)
}

// putBackReleased is putBack for a lease that its holder released. With
// barging on and the oldest waiter younger than the window (barge.go), the
// connection goes on the idle stack for whoever asks next, stamped with the
// time, so that the barging timer can tell how long it sat there.
// Everything else that puts a connection back (a new one from a dial, a
// lease a leaving waiter passes on) calls putBack: those were meant for a
// waiter already.
func (e *exclusiveEngine[T]) putBackReleased(r *leaseRecord[T]) {
	p := e.p
	if p.hot.waiters.Load() == 0 && !p.hot.over.Load() {
		// The common case, nobody waiting and nothing to close: straight
		// onto the stack, as putBack would, a call shorter.
		e.putIdle(r, false)
		return
	}
	if e.barge == nil || p.hot.over.Load() {
		e.putBack(r) // which closes it if the pool is above its limit
		return
	}
	now := p.now()
	if !e.mayBarge(now) {
		e.putBack(r)
		return
	}
	r.c.idleSince.Store(now)
	e.putIdle(r, true)
}

// putBack closes the connection if it was retired or a shrink still wants
// one closed, else hands it to the oldest waiter or puts it on its idle
// stack.
func (e *exclusiveEngine[T]) putBack(r *leaseRecord[T]) {
	p := e.p
	if why := r.c.retiredFor(); why != 0 {
		// Retired while off the stacks and not held (under a take's check,
		// passed on by a waiter, being swept), where retire's sweep could
		// not reach it.
		r.free()
		e.close(r.c, why)
		return
	}
	if p.hot.over.Load() && p.claimExcess(r.c) {
		r.free()
		e.close(r.c, ReasonResized)
		return
	}
	// Straight to the oldest waiter: the connection never touches the
	// stack, so no newcomer can take it first and no wake-up is lost.
	if p.hot.waiters.Load() > 0 && e.handOff(r) {
		return
	}
	e.putIdle(r, false)
}

// putIdle puts the connection of a lease that nobody holds on its
// partition's idle stack, then serves a waiter that may have missed it; a
// barging release leaves a young waiter to the barging timer.
func (e *exclusiveEngine[T]) putIdle(r *leaseRecord[T], barging bool) {
	p, c := e.p, r.c
	if e.barge != nil && !barging && !p.feat.clockOnIdle {
		// The barging timer reads it to tell a miss. A barging release
		// stamped it already, and so does every release in a pool that
		// tracks idleness.
		c.idleSince.Store(p.now())
	}
	e.push(c)

	// A waiter may have enqueued after our look at the waiters but before
	// the push, and looked at the stack before the push too. Every waiter
	// enqueues before its last look at the stacks and we pushed before
	// this second look at the waiters, so one of the two sides sees the
	// other.
	if p.hot.waiters.Load() > 0 {
		if barging && e.mayBarge(p.now()) {
			e.barge.arm()
		} else {
			e.handOffIdle(nil)
		}
	}
	// Close empties the stacks once, after it sets closed; a push that
	// raced with it is caught here.
	if p.hot.closed.Load() {
		e.closeIdle()
	}
}

// handOffIdle hands idle connections to the oldest waiters while there are
// both, calling seen (when not nil) with each connection it pops for a
// waiter.
func (e *exclusiveEngine[T]) handOffIdle(seen func(c *conn[T])) {
	p := e.p
	for p.hot.waiters.Load() > 0 {
		c := e.popIdle()
		if c == nil {
			return
		}
		if seen != nil {
			seen(c)
		}
		if !e.handOff(&c.lease) {
			// The queue emptied after our look at the waiters. Back on the
			// stack, and look again: a waiter that enqueued since may have
			// looked at the stacks before this push.
			e.push(c)
			// Close may have emptied the stacks (and failed the waiters)
			// between our pop and this push, as in putIdle.
			if p.hot.closed.Load() {
				e.closeIdle()
				return
			}
		}
	}
}

// handOff gives r to the oldest waiter and reports whether there was one.
func (e *exclusiveEngine[T]) handOff(r *leaseRecord[T]) bool {
	w := e.p.wq.popOldest()
	if w == nil {
		return false
	}
	e.handTo(w, r)
	return true
}

// handTo hands r to w, a waiter just taken off the queue.
func (e *exclusiveEngine[T]) handTo(w *waiter[T], r *leaseRecord[T]) {
	yield := e.yieldAfterHandOff(r)
	w.ch <- handed[T]{lease: e.p.hold(r)}
	if yield {
		runtime.Gosched()
	}
}

// yieldHeldUnder: a lease held for less than this did no network round
// trip, which takes longer even over loopback, and its holder was busy on
// the CPU only. See yieldAfterHandOff.
const yieldHeldUnder = 5 * time.Microsecond

// yieldAfterHandOff stamps r as handed over now and says whether the
// releaser should yield its processor to the waiter it is handing r to.
//
// After CPU work alone the yield keeps a crowd from forming a convoy, in
// which the releaser, about to acquire again, finds nothing idle and parks.
// After a network round trip it costs throughput: runtime.Gosched puts the
// releaser on the global run queue, served last, and wakes no idle processor.
// The two are told apart by how long the lease was held since its own
// hand-over (yieldHeldUnder); a lease taken from the idle stacks has no stamp
// and yields. A barging pool always yields: its hand-offs are the exception.
// Figures in BENCHMARKS.md ("The releaser's yield").
func (e *exclusiveEngine[T]) yieldAfterHandOff(r *leaseRecord[T]) bool {
	if e.barge != nil {
		return true // no stamp needed: no clock read on this path
	}
	now := e.p.now()
	prev := r.handedAt
	r.handedAt = now
	return prev == 0 || now-prev < int64(yieldHeldUnder)
}

// close closes a connection that nobody else can reach any more (it is off
// the idle stacks and its lease is not held): its slot is freed and the
// closer takes it.
func (e *exclusiveEngine[T]) close(c *conn[T], reason Reason) {
	e.p.counters.countLeft(reason) // before TotalConns loses it (closeLeft)
	e.slots.forget(c)
	e.p.closeLeft(c, reason)
}

// closeTaken closes the connection of a lease taken for a caller that failed
// a check before the caller got it.
func (e *exclusiveEngine[T]) closeTaken(r *leaseRecord[T], reason Reason) {
	r.free()
	e.close(r.c, reason)
}

// adopt gives the new connection its one lease, a slot and a partition,
// round robin, then puts it back: to a waiter, or idle.
func (e *exclusiveEngine[T]) adopt(c *conn[T]) {
	p := e.p
	c.lease.c = c
	if p.cfg.LeakThreshold > 0 || p.feat.nameTaker {
		c.lease.leak = new(leakInfo)
	}
	c.part = int32((e.nextPart.Add(1) - 1) % uint32(len(e.parts)))
	e.slots.put(c)
	if p.dialledBeforeReset(c) {
		// Asked once c is in the slot table: a Reset that counted after
		// this look marks c in its own walk. putBack closes it.
		c.retire(ReasonReset)
	}
	// The oldest waiter comes off the queue before the dial stops
	// counting: in between, maybeDial would see a waiter with no dial for
	// it and dial again, for a connection already on its way.
	var w *waiter[T]
	if c.retiredFor() == 0 && p.hot.waiters.Load() > 0 && !p.hot.over.Load() {
		w = p.wq.popOldest()
	}
	p.cap.landed()
	if w != nil {
		e.handTo(w, &c.lease)
		return
	}
	e.putBack(&c.lease)
}

func (e *exclusiveEngine[T]) hijack(l Lease[T]) error {
	if !l.end() {
		return ErrLeaseReleased
	}
	e.slots.forget(l.rec.c)
	return nil
}

// setStreamLimit does nothing: an exclusive connection serves one lease.
func (e *exclusiveEngine[T]) setStreamLimit(*conn[T], int) {}

// retire marks c (no lock: one holder at most to tell, whose release reads
// the mark); if nobody holds it, it is idle (or about to be taken, and then
// closed on release) and comes off its stack now. One off the stacks and
// not held (under a take's check, on its way to a waiter) is closed where
// it comes back: putBack and push read the mark.
func (e *exclusiveEngine[T]) retire(c *conn[T], reason Reason) {
	if !c.retired.CompareAndSwap(0, int32(reason)) || c.lease.isHeld() {
		return // retiring already, or its release will close it
	}
	e.sweep(int(c.part), func(x *conn[T]) Reason {
		if x == c {
			return reason
		}
		return 0
	})
}

// countWait records a waited acquire in c's partition, on a line the
// goroutine that was just handed c touches anyway.
func (e *exclusiveEngine[T]) countWait(c *conn[T], wait int64) {
	part := &e.parts[c.part]
	part.waited.Add(1)
	part.waitNanos.Add(wait)
}
