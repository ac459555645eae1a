package shoal

// closeConn runs the hooks and Close for a connection its engine has let go
// of, then gives its place in MaxConns back. With a hook or a Close to run,
// it does that on a goroutine of its own: a Close can take as long as the
// network lets it (a stalled peer, a server slow to acknowledge), and the
// goroutine that let the connection go (a caller's Release or Discard, an
// acquire whose check failed, maintenance, Close) must not wait for it. The
// place in MaxConns, and a budget's permit, stay taken until Close has
// returned, so the server never sees more connections than the limit, and
// Pool.Close waits for these closes too.
func (p *Pool[T]) closeConn(c *conn[T], reason Reason) {
	p.counters.countLeft(reason)
	p.closeLeft(c, reason)
}

// closeLeft is closeConn for a connection already counted by its reason
// (Stats.ClosedFor): each engine counts it before it leaves its open
// connections (the slot table, the multiplexed set), so that a Stats whose
// TotalConns no longer has it counts why it went. closeConn itself is for
// one that never joined them: dialled, it landed after a Close, a shrink
// or a Reset.
func (p *Pool[T]) closeLeft(c *conn[T], reason Reason) {
	// Now, while the connection has just left its engine, so that
	// Stats.Acquires never misses its hand-outs for the whole close.
	p.counters.closedHandouts.Add(c.handouts())
	p.cap.up.Add(-1)
	if p.cfg.Hooks.OnDisconnect == nil && p.cfg.Close == nil {
		p.closeDone(c, reason, false)
		return
	}
	p.cap.closing.Add(1)
	if p.keepsFloor() {
		// Closing, it no longer counts towards MinConns or MinIdle: its
		// replacement need not wait for a Close that may wait on the
		// network.
		p.kickMaintenance()
	}
	go func() {
		if p.cfg.Hooks.OnDisconnect != nil {
			p.callOnDisconnect(c, reason)
		}
		if p.cfg.Close != nil {
			if err := p.callClose(c); err != nil {
				p.logConnError("close failed", c, err)
			}
		}
		p.closeDone(c, reason, true)
	}()
}

// closeDone accounts for a closed connection: counters, log, observer, its
// permit and its place in MaxConns; async says closeConn counted it in
// capacity.closing. That count and the place go together, before anything
// that may let Close return, so that a drained pool has no close left
// running.
func (p *Pool[T]) closeDone(c *conn[T], reason Reason, async bool) {
	p.logClosed(c, reason)
	if p.obs != nil {
		p.obs.ObserveClose(reason)
	}
	if c.permit != nil {
		c.permit.Release()
	}
	p.counters.closed.Add(1)
	if async {
		// Before the place: nothingCanServe may read one high for a
		// moment (nobody fails waiters for it), never one low.
		p.cap.closing.Add(-1)
	}
	if c.excess {
		p.cap.closedExcess()
	} else {
		p.cap.open.Add(-1)
	}
	p.capacityFreed()
}

// capacityFreed runs after a place in MaxConns became free: dials for the
// waiters and the floors, or, in a closed pool, the last look before Close
// returns.
func (p *Pool[T]) capacityFreed() {
	if p.hot.closed.Load() {
		p.checkDrained()
		return
	}
	if p.hot.waiters.Load() > 0 && p.cap.established() <= 0 {
		// The last connection up is gone while dials fail: its waiters
		// get the dial's error now, as a newcomer would (failFast),
		// rather than at the next probe's failure.
		if err := p.downError(); err != nil {
			p.wq.failAll(err, false)
		}
	}
	if p.hot.waiters.Load() > p.cap.dialing.Load() {
		p.maybeDial()
	}
	if p.keepsFloor() {
		p.kickMaintenance()
	}
}
