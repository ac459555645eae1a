package shoal

import (
	"context"
	"sync"
	"sync/atomic"
	"time"
)

// muxEngine is the multiplexed mode (MaxStreams > 1): the open connections,
// each with its streams (muxConn), under one mutex. Nothing outside
// this file touches its fields or a connection's streams; the Pool calls it
// through the engine interface (engine.go).
//
// A plain mutex is the right tool here: a multiplexed lease is held for a
// request's round trip, not nanoseconds, and picking the least-loaded
// connection needs a consistent view of all of them.
//
// Lock order: mu before the wait queue's.
type muxEngine[T any] struct {
	p     *Pool[T]
	mu    sync.Mutex
	conns []*conn[T]
	turn  uint32 // where the next least-loaded scan starts; guarded by mu
	// idleSeq counts the times a connection went idle; guarded by mu.
	idleSeq uint64

	waited    atomic.Int64 // acquires that had to wait (Stats.WaitedAcquires)
	waitNanos atomic.Int64 // and how long they waited in all
}

// muxConn is a multiplexed connection's streams, guarded by muxEngine.mu.
type muxConn[T any] struct {
	streams     int              // leases held now
	limit       int              // stream limit for this conn (<= MaxStreams)
	leases      []leaseRecord[T] // one per stream
	freeStreams []int32          // indices of leases not held
	idleSeq     uint64           // muxEngine.idleSeq when it last went idle
}

// take returns a lease on the least-loaded connection with a free stream
// that passes its checks (on the most loaded one that Config.Fill accepts,
// first), or the zero Lease when every connection is full, or when every
// one with room is held up (Config.Avoid) and a caller who can wait may
// have a new one instead (mayOpenAnother).
func (m *muxEngine[T]) take(ctx context.Context, wait waitPlace) Lease[T] {
	p := m.p
	for {
		var retired []*conn[T]
		m.mu.Lock()
		now := int64(0)
		if p.cfg.MaxLifetime > 0 || p.feat.healthAfter != 0 {
			now = p.now()
		}
		// The least-loaded connection that takes new leases and is not
		// full. Ties go round the set: ranks count from a start that moves
		// one further each time, so that when most connections carry the
		// same load (short calls among long ones, say) the short calls
		// spread over all of them, as round-robin would, instead of piling
		// onto the first in the list, whose goroutines at both ends would
		// then serialise work that could run in parallel.
		// best is the least-loaded connection; fill, with Config.Fill, the
		// most loaded one that Fill accepts, which goes first.
		var best, fill *conn[T]
		leases := 0 // held on every connection, for mayOpenAnother
		n := len(m.conns)
		start := int(m.turn % uint32(max(n, 1)))
		m.turn++
		bestRank := 0
		for i := 0; i < len(m.conns); i++ {
			c := m.conns[i]
			leases += c.mux.streams
			if c.expired(now) {
				c.retire(ReasonLifetime)
			}
			if c.retiredFor() != 0 {
				if c.mux.streams == 0 {
					retired = append(retired, m.dropLocked(i))
					i--
				}
				continue
			}
			if c.mux.streams >= c.mux.limit {
				continue
			}
			if p.cfg.Fill != nil && c.mux.streams > 0 && (fill == nil || c.mux.streams > fill.mux.streams) && p.callFill(c.value, c.mux.streams) {
				fill = c
			}
			rank := (i - start + n) % n
			if best == nil || c.mux.streams < best.mux.streams || (c.mux.streams == best.mux.streams && m.beforeLocked(c, rank, best, bestRank)) {
				best, bestRank = c, rank
			}
		}
		var l Lease[T]
		wasIdle, busy := false, false
		if best != nil {
			// The least-loaded connection is busy: every other open
			// one is busy or full.
			busy = best.mux.streams >= p.feat.busyStreams && p.feat.busyStreams < p.feat.maxStreams
			if fill != nil {
				best = fill
			} else if best.mux.streams > 0 && p.cfg.Avoid != nil && p.callAvoid(best.value) {
				// An alternative carries at least as many leases, so
				// busy, worked out from the least-loaded, stands.
				if alt := m.unavoidedLocked(best, start, n); alt != nil {
					best = alt
				} else if wait != noWait && p.mayOpenAnother(leases, wait) {
					// Behind the held-up request the caller would wait
					// for it, perhaps for seconds; the connection being
					// opened (busy or the wait queue starts it) takes
					// milliseconds.
					best = nil
				}
			}
			if best != nil {
				wasIdle = best.mux.streams == 0
				l = m.takeStreamLocked(best)
			}
		}
		m.mu.Unlock()
		for _, c := range retired {
			p.closeLeft(c, c.retiredFor())
		}
		if busy {
			p.dialAhead()
		}
		if l.rec == nil {
			return l
		}
		if p.feat.checkOnTake {
			if reason, ok := p.check(ctx, l.rec.c, wasIdle, now); !ok {
				p.counters.unused.Add(1)
				if callerGone(ctx, reason) {
					// The caller's context ended during the check, which
					// says nothing of the connection (as in the exclusive
					// engine's take): its stream goes back, an idle
					// connection as idle as it was, still due for its
					// check, and the caller looks no further.
					m.putBackStream(l.rec, 0, !wasIdle)
					return Lease[T]{}
				}
				m.closeTaken(l.rec, reason)
				continue
			}
		}
		return l
	}
}

// unavoidedLocked returns the least-loaded connection other than avoided
// that may take a lease and that Config.Avoid does not report, or nil.
// take calls it only when the connection it would pick is avoided, which
// is rare, so the common pick costs one call of Avoid at most. start and n
// rank ties as take ranked them (n is the count before take dropped the
// retired connections, so that every rank stays within [0, n)). m.mu must
// be held.
func (m *muxEngine[T]) unavoidedLocked(avoided *conn[T], start, n int) *conn[T] {
	var best *conn[T]
	bestRank := 0
	for i, c := range m.conns {
		if c == avoided || c.retiredFor() != 0 || c.mux.streams >= c.mux.limit {
			continue
		}
		rank := (i - start + n) % n
		if best != nil && !(c.mux.streams < best.mux.streams || c.mux.streams == best.mux.streams && m.beforeLocked(c, rank, best, bestRank)) {
			continue
		}
		if c.mux.streams > 0 && m.p.callAvoid(c.value) {
			continue
		}
		best, bestRank = c, rank
	}
	return best
}

// beforeLocked breaks a tie between two equally loaded connections, c at
// rank and best at bestRank: among busy ones the rank decides (round the
// set), and among idle ones the last to go idle wins, so that a lone
// caller's leases, one after another, keep to one connection, whose peer
// (a database backend, say) stays awake and in cache, rather than wake a
// cold one each time. m.mu must be held.
func (m *muxEngine[T]) beforeLocked(c *conn[T], rank int, best *conn[T], bestRank int) bool {
	if c.mux.streams == 0 {
		return c.mux.idleSeq > best.mux.idleSeq
	}
	return rank < bestRank
}

// takeStreamLocked reserves one stream of c and returns its lease, held.
// m.mu must be held and c must have a free stream.
func (m *muxEngine[T]) takeStreamLocked(c *conn[T]) Lease[T] {
	mc := c.mux
	i := mc.freeStreams[len(mc.freeStreams)-1]
	mc.freeStreams = mc.freeStreams[:len(mc.freeStreams)-1]
	mc.streams++
	return m.p.hold(&mc.leases[i])
}

// freeStreamLocked gives r's stream back to its connection. m.mu must be
// held and r must not be held.
func (m *muxEngine[T]) freeStreamLocked(r *leaseRecord[T]) {
	mc := r.c.mux
	mc.streams--
	mc.freeStreams = append(mc.freeStreams, r.stream)
}

// removeLocked drops conns[i] from the set, not keeping order.
func (m *muxEngine[T]) removeLocked(i int) {
	last := len(m.conns) - 1
	m.conns[i] = m.conns[last]
	m.conns[last] = nil
	m.conns = m.conns[:last]
}

// removeConnLocked drops c from the set and reports whether it was there.
func (m *muxEngine[T]) removeConnLocked(c *conn[T]) bool {
	for i, x := range m.conns {
		if x == c {
			m.removeLocked(i)
			return true
		}
	}
	return false
}

// dropLocked drops conns[i], retired and with no lease, from the set and
// returns it, counted by the reason it retired for (Stats.ClosedFor): under
// m.mu, where Stats counts the set, so that a snapshot whose TotalConns no
// longer has it counts why it went. The caller closes it with closeLeft
// once m.mu is let go.
func (m *muxEngine[T]) dropLocked(i int) *conn[T] {
	c := m.conns[i]
	m.p.counters.countLeft(c.retiredFor())
	m.removeLocked(i)
	return c
}

// dropConnLocked is dropLocked for c, and reports whether c was in the set;
// one that was not is closing already, and is not counted again.
func (m *muxEngine[T]) dropConnLocked(c *conn[T]) bool {
	if !m.removeConnLocked(c) {
		return false
	}
	m.p.counters.countLeft(c.retiredFor())
	return true
}

// release takes back a stream lease released or discarded by its holder.
func (m *muxEngine[T]) release(r *leaseRecord[T], reason Reason) {
	if reason == 0 && m.p.cfg.Hooks.AfterRelease != nil && !m.p.callAfterRelease(r.c) {
		reason = ReasonRejected
	}
	m.putBackStream(r, reason, true)
}

// putBackStream puts a stream of r's connection back: released, passed on by a waiter
// who gave up (reason 0), or closed after a failed check. With a reason the
// connection also retires. The freed stream goes straight to the oldest
// waiter when the connection can still serve. used says whether a
// connection left with no lease counts as going idle now; false keeps its
// idleness as it was, for a stream taken from an idle connection and given
// back unused (take's check cut short by its caller's context).
func (m *muxEngine[T]) putBackStream(r *leaseRecord[T], reason Reason, used bool) {
	p, c := m.p, r.c
	now := int64(0) // the pool's clock, read once at most
	m.mu.Lock()
	switch {
	case reason != 0:
		c.retire(reason)
	case p.hot.closed.Load():
		c.retire(ReasonPoolClosed)
	case c.expiresAt != 0:
		if now = p.now(); c.expired(now) {
			c.retire(ReasonLifetime)
		}
	}
	// The stream moves to a waiter only while the connection is within its
	// limit: one lowered under it (Lease.SetStreamLimit) sheds its streams
	// as they come back, until it is.
	if c.retiredFor() == 0 && c.mux.streams <= c.mux.limit && p.hot.waiters.Load() > 0 {
		if w := p.wq.popOldest(); w != nil {
			// Same stream, new holder: the lease moves as it is.
			h := p.hold(r)
			m.mu.Unlock()
			w.ch <- handed[T]{lease: h}
			return
		}
	}
	r.free()
	m.freeStreamLocked(r)
	closeNow := false
	if c.mux.streams == 0 && used {
		m.idleSeq++
		c.mux.idleSeq = m.idleSeq
	}
	switch {
	case c.retiredFor() != 0 && c.mux.streams == 0:
		// In the set still: it had a lease until now, and only a
		// connection with none leaves it.
		closeNow = m.dropConnLocked(c)
	case c.mux.streams == 0 && used && p.feat.clockOnIdle:
		if now == 0 {
			now = p.now()
		}
		c.idleSince.Store(now)
	}
	m.mu.Unlock()
	if closeNow {
		p.closeLeft(c, c.retiredFor())
	}
}

// putBack frees a stream that a waiter who gave up passed on.
func (m *muxEngine[T]) putBack(r *leaseRecord[T]) { m.putBackStream(r, 0, true) }

// closeTaken frees the stream of a lease that failed its check, retiring
// its connection.
func (m *muxEngine[T]) closeTaken(r *leaseRecord[T], reason Reason) {
	m.putBackStream(r, reason, true)
}

// closeIdle retires every connection of a closed pool: idle ones close
// now, busy ones when their last lease ends.
func (m *muxEngine[T]) closeIdle() { m.retireAll(ReasonPoolClosed) }

// takeIdle returns nil: a multiplexed connection is never held whole, so
// Pool.AcquireAllIdle has nothing to give.
func (m *muxEngine[T]) takeIdle() []Lease[T] { return nil }

// hijack ends l, the last lease on its connection, and takes the
// connection out of the set without closing it.
func (m *muxEngine[T]) hijack(l Lease[T]) error {
	c := l.rec.c
	m.mu.Lock()
	defer m.mu.Unlock()
	if !l.held() {
		return ErrLeaseReleased
	}
	if c.mux.streams != 1 || !l.end() {
		return ErrHijackShared
	}
	m.freeStreamLocked(l.rec)
	m.removeConnLocked(c)
	return nil
}

// adopt adds a freshly dialled connection and serves waiters from it.
func (m *muxEngine[T]) adopt(c *conn[T]) {
	p := m.p
	mc := &muxConn[T]{limit: p.feat.maxStreams}
	if p.cfg.Hooks.StreamLimit != nil {
		if n := p.callStreamLimit(c); n >= 1 && n < p.feat.maxStreams {
			mc.limit = n
		}
	}
	mc.leases = make([]leaseRecord[T], p.feat.maxStreams)
	mc.freeStreams = make([]int32, p.feat.maxStreams)
	for i := range mc.leases {
		mc.leases[i].c = c
		mc.leases[i].stream = int32(i)
		if p.cfg.LeakThreshold > 0 || p.feat.nameTaker {
			mc.leases[i].leak = new(leakInfo)
		}
		mc.freeStreams[i] = int32(p.feat.maxStreams - 1 - i)
	}
	c.mux = mc
	m.mu.Lock()
	if p.hot.closed.Load() {
		m.mu.Unlock()
		p.cap.landed()
		p.closeConn(c, ReasonPoolClosed)
		return
	}
	if p.dialledBeforeReset(c) {
		// Reset's sweep, under m.mu too, came before this look.
		m.mu.Unlock()
		p.cap.landed()
		p.closeConn(c, ReasonReset)
		return
	}
	if m.fullLocked() {
		// Dialled before a shrink: the pool has what its limit allows.
		m.mu.Unlock()
		p.cap.landed()
		p.closeConn(c, ReasonResized)
		return
	}
	m.conns = append(m.conns, c)
	deliveries := m.takeForWaitersLocked(c)
	// Counted in the set now, and the waiters it serves are off the queue,
	// so nobody dials again for them (see Pool.adopt).
	p.cap.landed()
	m.mu.Unlock()
	deliver(deliveries)
}

// takeForWaitersLocked takes streams of c for waiters, oldest first, while
// c has room. The caller delivers the result after unlocking m.mu.
func (m *muxEngine[T]) takeForWaitersLocked(c *conn[T]) []delivery[T] {
	var out []delivery[T]
	for c.retiredFor() == 0 && c.mux.streams < c.mux.limit && m.p.hot.waiters.Load() > 0 {
		w := m.p.wq.popOldest()
		if w == nil {
			break
		}
		out = append(out, delivery[T]{w: w, l: m.takeStreamLocked(c)})
	}
	return out
}

type delivery[T any] struct {
	w *waiter[T]
	l Lease[T]
}

func deliver[T any](ds []delivery[T]) {
	for _, d := range ds {
		d.w.ch <- handed[T]{lease: d.l}
	}
}

// retire stops c from taking new leases; it closes when its last lease
// ends, at once if it has none.
func (m *muxEngine[T]) retire(c *conn[T], reason Reason) {
	m.mu.Lock()
	c.retire(reason)
	// An idle one leaves the set now; one already gone is closing already.
	idle := c.mux.streams == 0 && m.dropConnLocked(c)
	m.mu.Unlock()
	if idle {
		m.p.closeLeft(c, c.retiredFor())
	}
}

// setStreamLimit changes how many leases c serves at once.
func (m *muxEngine[T]) setStreamLimit(c *conn[T], n int) {
	if n < 1 {
		return
	}
	m.mu.Lock()
	c.mux.limit = min(n, m.p.feat.maxStreams)
	deliveries := m.takeForWaitersLocked(c)
	m.mu.Unlock()
	deliver(deliveries)
}

// retireAll retires every connection for reason (unless it is retiring
// already) and closes those with no lease now; the others close when their
// last lease ends.
func (m *muxEngine[T]) retireAll(reason Reason) {
	m.mu.Lock()
	var idle []*conn[T]
	for i := 0; i < len(m.conns); i++ {
		c := m.conns[i]
		c.retire(reason)
		if c.mux.streams == 0 {
			idle = append(idle, m.dropLocked(i))
			i--
		}
	}
	m.mu.Unlock()
	for _, c := range idle {
		m.p.closeLeft(c, c.retiredFor())
	}
}

// reap retires connections past their lifetime, and idle ones past
// MaxIdleTime while more than MinConns are open (MinIdle is exclusive
// mode's), and closes those with no lease.
func (m *muxEngine[T]) reap(now int64) {
	p := m.p
	maxIdle := int64(p.cfg.MaxIdleTime)
	m.mu.Lock()
	live := 0
	for _, c := range m.conns {
		if c.retiredFor() == 0 {
			live++
		}
	}
	var closing []*conn[T]
	for i := 0; i < len(m.conns); i++ {
		c := m.conns[i]
		if c.retiredFor() == 0 && c.expired(now) {
			c.retire(ReasonLifetime)
			live--
		}
		if c.retiredFor() == 0 && c.mux.streams == 0 && maxIdle > 0 && c.idleFor(now) >= maxIdle &&
			live > p.cfg.MinConns {
			c.retire(ReasonIdle)
			live--
		}
		if c.retiredFor() != 0 && c.mux.streams == 0 {
			closing = append(closing, m.dropLocked(i))
			i--
		}
	}
	m.mu.Unlock()
	for _, c := range closing {
		p.closeLeft(c, c.retiredFor())
	}
}

// shrink retires the connections above the limit, those with the fewest
// leases first: idle ones close now, busy ones when their last lease ends.
// Waiters are served by the rest, or wait.
func (m *muxEngine[T]) shrink() {
	m.mu.Lock()
	limit := int(m.p.cap.limit.Load())
	var live []*conn[T]
	for _, c := range m.conns {
		if c.retiredFor() == 0 {
			live = append(live, c)
		}
	}
	var idle []*conn[T]
	for excess := len(live) - limit; excess > 0; excess-- {
		least := 0
		for i, c := range live {
			if c.mux.streams < live[least].mux.streams {
				least = i
			}
		}
		c := live[least]
		live = append(live[:least], live[least+1:]...)
		c.retire(ReasonResized)
		if c.mux.streams == 0 && m.dropConnLocked(c) {
			idle = append(idle, c)
		}
	}
	m.mu.Unlock()
	for _, c := range idle {
		m.p.closeLeft(c, c.retiredFor())
	}
}

// fullLocked reports whether the set already has as many live connections
// as the limit, so that one more, dialled before a shrink, must close. m.mu
// must be held.
func (m *muxEngine[T]) fullLocked() bool {
	live := 0
	for _, c := range m.conns {
		if c.retiredFor() == 0 {
			live++
		}
	}
	return live >= int(m.p.cap.limit.Load())
}

// allBusy reports whether every live connection carries BusyStreams
// leases or more, with BusyStreams below MaxStreams: the state in which
// take dials ahead (dialAhead), for a limit that rose after take found it
// and could not.
func (m *muxEngine[T]) allBusy() bool {
	f := &m.p.feat
	if f.busyStreams >= f.maxStreams {
		return false
	}
	m.mu.Lock()
	defer m.mu.Unlock()
	live := 0
	for _, c := range m.conns {
		if c.retiredFor() != 0 {
			continue
		}
		if c.mux.streams < f.busyStreams {
			return false
		}
		live++
	}
	return live > 0
}

// stats fills the gauges and wait counters of s and adds the connections'
// hand-outs.
func (m *muxEngine[T]) stats(s *Stats) {
	s.WaitedAcquires += m.waited.Load()
	s.WaitTime += time.Duration(m.waitNanos.Load())
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.conns {
		s.TotalConns++
		s.Acquires += c.handouts()
		s.Leases += c.mux.streams
		if c.mux.streams > 0 {
			s.InUseConns++
		} else {
			s.IdleConns++
		}
	}
}

// count returns the leases held now, the connections with at least one,
// and the live connections with none.
func (m *muxEngine[T]) count() (leases, inUse, idle int) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.conns {
		leases += c.mux.streams
		switch {
		case c.mux.streams > 0:
			inUse++
		case c.retiredFor() == 0:
			idle++
		}
	}
	return leases, inUse, idle
}

// leased reports whether any connection has a lease held.
func (m *muxEngine[T]) leased() bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.conns {
		if c.mux.streams > 0 {
			return true
		}
	}
	return false
}

// checkIdle does nothing: HealthCheckPeriod is for exclusive connections,
// and Validate refuses it with MaxStreams > 1.
func (m *muxEngine[T]) checkIdle(int64) {}

// countWait records a waited acquire.
func (m *muxEngine[T]) countWait(_ *conn[T], wait int64) {
	m.waited.Add(1)
	m.waitNanos.Add(wait)
}

// heldLeases returns the leases held now, for the leak scan.
func (m *muxEngine[T]) heldLeases() []*leaseRecord[T] {
	m.mu.Lock()
	defer m.mu.Unlock()
	var held []*leaseRecord[T]
	for _, c := range m.conns {
		for i := range c.mux.leases {
			if c.mux.leases[i].isHeld() {
				held = append(held, &c.mux.leases[i])
			}
		}
	}
	return held
}
