package shoal

import (
	"context"
	"time"
)

// The exclusive engine's upkeep: what maintenance, Reset, Close, a resize
// and Stats ask of it, off the acquire and release paths.

// healthCheckTimeout bounds one background check of an idle connection, so
// that a check that hangs cannot stop maintenance.
const healthCheckTimeout = 5 * time.Second

// popAll takes every connection off partition part's idle stack, top
// first.
func (e *exclusiveEngine[T]) popAll(part int) []*conn[T] {
	var popped []*conn[T]
	for {
		c := e.parts[part].idle.pop(&e.slots)
		if c == nil {
			return popped
		}
		popped = append(popped, c)
	}
}

// anyIdle reports whether partition part has an idle connection for which
// pred holds, looking at the slot table, not the stack: upkeep asks it
// before emptying a stack, which makes the partition's acquirers steal or
// wait.
func (e *exclusiveEngine[T]) anyIdle(part int, pred func(c *conn[T]) bool) bool {
	found := false
	e.slots.each(func(c *conn[T]) bool {
		found = int(c.part) == part && !c.lease.isHeld() && pred(c)
		return !found
	})
	return found
}

// sweep takes every idle connection off partition i's stack, closes those
// for which closeWhy gives a reason, and puts the rest back (or hands them
// to waiters) in the order they came off, bottom first.
func (e *exclusiveEngine[T]) sweep(i int, closeWhy func(c *conn[T]) Reason) {
	var keep []*conn[T]
	for _, c := range e.popAll(i) {
		if why := closeWhy(c); why != 0 {
			e.close(c, why)
		} else {
			keep = append(keep, c)
		}
	}
	for k := len(keep) - 1; k >= 0; k-- {
		e.putBack(&keep[k].lease)
	}
}

// retireAll marks every open connection, then sweeps the idle ones off
// the stacks: those dialled since the marks go back.
func (e *exclusiveEngine[T]) retireAll(reason Reason) {
	e.slots.each(func(c *conn[T]) bool {
		c.retire(reason)
		return true
	})
	for i := range e.parts {
		e.sweep(i, func(c *conn[T]) Reason { return c.retiredFor() })
	}
}

func (e *exclusiveEngine[T]) closeIdle() {
	for i := range e.parts {
		for _, c := range e.popAll(i) {
			e.close(c, ReasonPoolClosed)
		}
	}
}

// stopBarging stops the barging timer for good (the pool is closing).
func (e *exclusiveEngine[T]) stopBarging() {
	if e.barge != nil {
		e.barge.stop()
	}
}

// reap keeps MinIdle idle and MinConns open, counting down as it closes.
func (e *exclusiveEngine[T]) reap(now int64) {
	p := e.p
	_, _, idle := e.tally()
	// Open, not being dialled and not being closed.
	live := int(p.cap.established())
	maxIdle := int64(p.cfg.MaxIdleTime)
	due := func(c *conn[T]) bool {
		return c.expired(now) || (maxIdle > 0 && c.idleFor(now) >= maxIdle)
	}
	for i := range e.parts {
		// Look before touching the stack: emptying it, even briefly,
		// makes acquirers on this partition steal or wait.
		if !e.anyIdle(i, due) {
			continue
		}
		e.sweep(i, func(c *conn[T]) Reason {
			switch {
			case c.expired(now):
				idle--
				live--
				return ReasonLifetime
			case maxIdle > 0 && c.idleFor(now) >= maxIdle && idle > p.cfg.MinIdle && live > p.cfg.MinConns:
				idle--
				live--
				return ReasonIdle
			}
			return 0
		})
	}
}

// checkIdle runs HealthCheck on every idle connection that has been idle at
// least HealthCheckAfter (HealthCheckPeriod). A partition with none due is
// left alone, as reap leaves it: emptying a stack, even briefly, makes
// acquirers steal or wait. Otherwise the stack is emptied once, the
// connections not due go straight back (bottom first, so they keep their
// order), and the due ones are checked one after another, each put back as
// soon as it passes: a slow check holds up only the connection it checks.
func (e *exclusiveEngine[T]) checkIdle(now int64) {
	for i := range e.parts {
		if !e.anyIdle(i, func(c *conn[T]) bool { return e.idleCheckDue(c, now) }) {
			continue
		}
		var due []*conn[T]
		popped := e.popAll(i)
		for k := len(popped) - 1; k >= 0; k-- {
			if c := popped[k]; e.idleCheckDue(c, now) {
				due = append(due, c)
			} else {
				e.putBack(&c.lease)
			}
		}
		for _, c := range due {
			e.checkOneIdle(c, now)
		}
	}
}

// idleCheckDue reports whether an idle connection is due for the background
// check: idle at least HealthCheckAfter and not past its lifetime (reap
// closes those).
func (e *exclusiveEngine[T]) idleCheckDue(c *conn[T], now int64) bool {
	return !c.expired(now) && c.idleFor(now) >= e.p.feat.healthAfter
}

// checkOneIdle checks one idle connection taken off its stack and puts it
// back, or closes it: for a failed check (ReasonHealth), or for what
// happened to it while it was off the stack, where Reset, a revoke or Close
// could not reach it.
func (e *exclusiveEngine[T]) checkOneIdle(c *conn[T], now int64) {
	p := e.p
	if p.hot.closed.Load() {
		e.close(c, ReasonPoolClosed)
		return
	}
	ctx, cancel := context.WithTimeout(p.life.ctx, healthCheckTimeout)
	err := p.callHealthCheck(context.WithValue(ctx, idleKey{}, time.Duration(c.idleFor(now))), c)
	cancel()
	switch {
	case p.hot.closed.Load():
		e.close(c, ReasonPoolClosed)
	case err != nil:
		p.logConnError("idle health check failed", c, err)
		e.close(c, ReasonHealth)
	default:
		e.putBack(&c.lease)
	}
}

// shrink closes idle connections while more are open than the limit allows;
// leased ones close as they come back (putBack asks claimExcess).
func (e *exclusiveEngine[T]) shrink() {
	p := e.p
	for p.hot.over.Load() {
		c := e.popIdle()
		if c == nil {
			return
		}
		if !p.claimExcess(c) {
			e.putBack(&c.lease)
			return
		}
		e.close(c, ReasonResized)
	}
}

// takeIdle empties every stack; a connection past its lifetime closes
// instead of being handed out.
func (e *exclusiveEngine[T]) takeIdle() []Lease[T] {
	p := e.p
	var leases []Lease[T]
	now := p.now()
	for i := range e.parts {
		for {
			c := e.parts[i].idle.pop(&e.slots)
			if c == nil {
				break
			}
			if c.expired(now) {
				e.close(c, ReasonLifetime)
				continue
			}
			c.lease.handedAt = 0
			leases = append(leases, p.acquired(p.hold(&c.lease), 0, false))
		}
	}
	return leases
}

func (e *exclusiveEngine[T]) heldLeases() []*leaseRecord[T] {
	var held []*leaseRecord[T]
	e.slots.each(func(c *conn[T]) bool {
		if c.lease.isHeld() {
			held = append(held, &c.lease)
		}
		return true
	})
	return held
}

// tally returns the hand-outs of the open connections' leases, and how
// many of them are leased and idle.
func (e *exclusiveEngine[T]) tally() (handouts int64, inUse, idle int) {
	e.slots.each(func(c *conn[T]) bool {
		handouts += c.lease.handouts()
		if c.lease.isHeld() {
			inUse++
		} else {
			idle++
		}
		return true
	})
	return handouts, inUse, idle
}

func (e *exclusiveEngine[T]) count() (leases, inUse, idle int) {
	_, inUse, idle = e.tally()
	return inUse, inUse, idle
}

func (e *exclusiveEngine[T]) leased() (held bool) {
	e.slots.each(func(c *conn[T]) bool {
		held = c.lease.isHeld()
		return !held
	})
	return held
}

func (e *exclusiveEngine[T]) stats(s *Stats) {
	handouts, inUse, idle := e.tally()
	s.Acquires += handouts
	s.InUseConns, s.IdleConns = inUse, idle
	s.TotalConns = inUse + idle
	s.Leases = inUse
	for i := range e.parts {
		s.WaitedAcquires += e.parts[i].waited.Load()
		s.WaitTime += time.Duration(e.parts[i].waitNanos.Load())
	}
	if e.barge != nil {
		s.BargeMisses = e.barge.misses.Load()
	}
}
