package shoal

import "context"

// The exclusive engine's side of the engine interface (engine.go). It leans
// on the Pool's exclusive-mode helpers around it: repoolOrBarge, pushIdle
// and handoff (release.go), sweepPartition and putBack (maintain.go,
// idlecheck.go), shrinkIdle and takeExcess (resize.go).

// take pops idle connections, home partition first, until one passes its
// checks.
func (e *exclusiveEngine[T]) take(ctx context.Context) Lease[T] {
	p := e.p
	for {
		c := e.popIdle()
		if c == nil {
			return Lease[T]{}
		}
		if p.checkOnTake {
			if reason, ok := p.check(ctx, c, true); !ok {
				if callerGone(ctx, reason) {
					// The check failed because the caller's context ended
					// (a ping cannot run without time), which says nothing
					// of the connection: keep it, and stop here rather than
					// fail every idle connection's check in turn.
					e.repool(&c.lease)
					return Lease[T]{}
				}
				p.closeConn(c, reason)
				continue
			}
		}
		c.lease.handedAt = 0
		return p.hold(&c.lease)
	}
}

// release closes the connection for a reason (its holder's, AfterRelease's,
// the pool's or its own) or puts it back.
func (e *exclusiveEngine[T]) release(l *leaseState[T], reason Reason) {
	p, c := e.p, l.c
	if reason != 0 {
		p.closeConn(c, reason)
		return
	}
	if p.cfg.Hooks.AfterRelease != nil && !p.callAfterRelease(c) {
		p.closeConn(c, ReasonRejected)
		return
	}
	if p.closed.Load() {
		p.closeConn(c, ReasonPoolClosed)
		return
	}
	if why := c.retiredFor(); why != 0 {
		p.closeConn(c, why)
		return
	}
	if c.expiresAt != 0 || p.clockOnIdle {
		now := p.now()
		if c.expired(now) {
			p.closeConn(c, ReasonLifetime)
			return
		}
		if p.clockOnIdle {
			c.idleSince.Store(now)
		}
	}
	p.repoolOrBarge(l)
}

// repool closes the connection if a shrink still wants one closed, else
// hands it to the oldest waiter or pushes it on its idle stack.
func (e *exclusiveEngine[T]) repool(l *leaseState[T]) {
	p := e.p
	if p.over.Load() && p.takeExcess() {
		l.free()
		p.closeConn(l.c, ReasonResized)
		return
	}
	// Straight to the oldest waiter: the connection never touches the
	// stack, so no newcomer can take it first and no wake-up is lost.
	if p.waiters.Load() > 0 && p.handoff(l) {
		return
	}
	p.pushIdle(l, false)
}

func (e *exclusiveEngine[T]) drop(l *leaseState[T], reason Reason) { e.p.closeConn(l.c, reason) }

// adopt gives the new connection its one lease, a slot and a partition.
func (e *exclusiveEngine[T]) adopt(c *conn[T]) {
	p := e.p
	c.lease.c = c
	if p.cfg.LeakThreshold > 0 {
		c.lease.leak = new(leakInfo)
	}
	e.place(c)
	p.dialing.Add(-1)
	e.repool(&c.lease)
}

func (e *exclusiveEngine[T]) hijack(l Lease[T]) error {
	if !l.end() {
		return ErrLeaseReleased
	}
	e.slots.forget(l.s.c)
	return nil
}

// setStreamLimit does nothing: an exclusive connection serves one lease.
func (e *exclusiveEngine[T]) setStreamLimit(*conn[T], int) {}

// retire marks c; its release reads the mark (no lock: exclusive mode has
// one holder to tell).
func (e *exclusiveEngine[T]) retire(c *conn[T], reason Reason) { c.retired.Store(int32(reason)) }

func (e *exclusiveEngine[T]) revoke(c *conn[T]) {
	if !c.retired.CompareAndSwap(0, int32(ReasonRevoked)) || c.lease.isHeld() {
		return // closing already, or its release will close it
	}
	// Idle now (or about to be taken, and then closed on release): take it
	// off its stack if it is still there.
	e.p.sweepPartition(int(c.part), func(x *conn[T]) Reason {
		if x == c {
			return ReasonRevoked
		}
		return 0
	})
}

// retireAll marks every open connection, then sweeps the idle ones off
// the stacks: those dialled since the marks go back.
func (e *exclusiveEngine[T]) retireAll(reason Reason) {
	e.slots.each(func(c *conn[T]) bool {
		c.retire(reason)
		return true
	})
	for i := range e.parts {
		e.p.sweepPartition(i, func(c *conn[T]) Reason { return c.retiredFor() })
	}
}

func (e *exclusiveEngine[T]) closeIdle() {
	for i := range e.parts {
		for _, c := range e.popAll(i) {
			e.p.closeConn(c, ReasonPoolClosed)
		}
	}
}

// reap keeps MinIdle idle and MinConns open, counting down as it closes.
func (e *exclusiveEngine[T]) reap(now int64) {
	p := e.p
	_, _, idle := e.tally()
	// Open, not being dialled and not being closed.
	live := int(p.open.Load() - p.dialing.Load() - p.closing.Load())
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
		p.sweepPartition(i, func(c *conn[T]) Reason {
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

// shrink closes idle connections while more are open than the limit allows;
// leased ones close as they come back (repool asks takeExcess).
func (e *exclusiveEngine[T]) shrink() { e.p.shrinkIdle() }

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
				p.closeConn(c, ReasonLifetime)
				continue
			}
			c.lease.handedAt = 0
			leases = append(leases, p.acquired(p.hold(&c.lease), 0, false))
		}
	}
	return leases
}

func (e *exclusiveEngine[T]) heldLeases() []*leaseState[T] {
	var held []*leaseState[T]
	e.slots.each(func(c *conn[T]) bool {
		if c.lease.isHeld() {
			held = append(held, &c.lease)
		}
		return true
	})
	return held
}

func (e *exclusiveEngine[T]) count() (leases, inUse, idle int) {
	_, inUse, idle = e.tally()
	return inUse, inUse, idle
}

func (e *exclusiveEngine[T]) stats(s *Stats) {
	handouts, inUse, idle := e.tally()
	s.Acquires += handouts
	s.InUseConns, s.IdleConns = inUse, idle
	s.TotalConns = inUse + idle
	s.Leases = inUse
}
