package shoal

import (
	"context"
	"sync"
)

// muxSet holds the connections of a multiplexed pool (MaxStreams > 1).
// A plain mutex is the right tool here: a multiplexed lease is held for a
// request's round trip, not nanoseconds, and picking the least-loaded
// connection needs a consistent view of all of them.
//
// Lock order: mux.mu before wq.mu.
type muxSet[T any] struct {
	mu    sync.Mutex
	conns []*conn[T]
	turn  uint32 // where the next least-loaded scan starts; guarded by mu
}

// muxTake returns a lease on the least-loaded connection with a free stream
// that passes its checks, or nil when every connection is full.
func (p *Pool[T]) muxTake(ctx context.Context) Lease[T] {
	for {
		var retired []*conn[T]
		p.mux.mu.Lock()
		now := int64(0)
		if p.cfg.MaxLifetime > 0 || p.healthAfter != 0 {
			now = p.now()
		}
		// The least-loaded connection that takes new leases and is not
		// full. Ties go round the set: ranks count from a start that moves
		// one further each time, so that when most connections carry the
		// same load (short calls among long ones, say) the short calls
		// spread over all of them, as round-robin would, instead of piling
		// onto the first in the list, whose goroutines at both ends would
		// then serialise work that could run in parallel.
		var best *conn[T]
		n := len(p.mux.conns)
		start := int(p.mux.turn % uint32(max(n, 1)))
		p.mux.turn++
		bestRank := 0
		for i := 0; i < len(p.mux.conns); i++ {
			c := p.mux.conns[i]
			if !c.retiring && c.expired(now) {
				c.retiring, c.reason = true, ReasonLifetime
			}
			if c.retiring {
				if c.streams == 0 {
					p.mux.removeLocked(i)
					i--
					retired = append(retired, c)
				}
				continue
			}
			if c.streams >= c.limit {
				continue
			}
			rank := (i - start + n) % n
			if best == nil || c.streams < best.streams || (c.streams == best.streams && rank < bestRank) {
				best, bestRank = c, rank
			}
		}
		var l Lease[T]
		wasIdle := false
		if best != nil {
			wasIdle = best.streams == 0
			l = best.takeStreamLocked()
		}
		p.mux.mu.Unlock()
		for _, c := range retired {
			p.disconnect(c, c.reason)
		}
		if l.s == nil {
			return l
		}
		if p.checkOnTake {
			if reason, ok := p.check(ctx, l.s.c, wasIdle); !ok {
				p.dropTaken(l.s, reason)
				continue
			}
		}
		return l
	}
}

// takeStreamLocked reserves one stream of c and returns its lease, held.
// p.mux.mu must be held and c must have a free stream.
func (c *conn[T]) takeStreamLocked() Lease[T] {
	i := c.free[len(c.free)-1]
	c.free = c.free[:len(c.free)-1]
	c.streams++
	return c.pool.hold(&c.leases[i])
}

// removeLocked drops conns[i] from the set, not keeping order.
func (m *muxSet[T]) removeLocked(i int) {
	last := len(m.conns) - 1
	m.conns[i] = m.conns[last]
	m.conns[last] = nil
	m.conns = m.conns[:last]
}

func (m *muxSet[T]) removeConnLocked(c *conn[T]) {
	for i, x := range m.conns {
		if x == c {
			m.removeLocked(i)
			return
		}
	}
}

// muxRelease takes back a stream lease released or discarded by its holder.
func (p *Pool[T]) muxRelease(l *leaseState[T], reason Reason) {
	if reason == 0 && p.cfg.Hooks.AfterRelease != nil && !p.callAfterRelease(l.c) {
		reason = ReasonRejected
	}
	p.muxFree(l, reason)
}

// muxFree frees a stream of l's connection; with a reason the connection
// also retires. The freed stream goes straight to the oldest waiter when
// the connection can still serve.
func (p *Pool[T]) muxFree(l *leaseState[T], reason Reason) {
	c := l.c
	p.mux.mu.Lock()
	if !c.retiring {
		switch {
		case reason != 0:
			c.retiring, c.reason = true, reason
		case p.closed.Load():
			c.retiring, c.reason = true, ReasonPoolClosed
		case c.expiresAt != 0 && c.expired(p.now()):
			c.retiring, c.reason = true, ReasonLifetime
		}
	}
	if !c.retiring && p.waiters.Load() > 0 {
		if w := p.wq.popOldest(); w != nil {
			// Same stream, new holder: the lease moves as it is.
			h := p.hold(l)
			p.mux.mu.Unlock()
			w.ch <- handed[T]{lease: h}
			return
		}
	}
	l.free()
	c.streams--
	c.free = append(c.free, l.slot)
	closeNow := c.retiring && c.streams == 0
	if closeNow {
		p.mux.removeConnLocked(c)
	} else if c.streams == 0 && p.clockOnIdle {
		c.idleSince.Store(p.now())
	}
	p.mux.mu.Unlock()
	if closeNow {
		p.disconnect(c, c.reason)
	}
}

// muxAdopt adds a freshly dialled connection and serves waiters from it.
func (p *Pool[T]) muxAdopt(c *conn[T]) {
	c.limit = p.maxStreams
	if p.cfg.Hooks.StreamLimit != nil {
		if n := p.callStreamLimit(c); n >= 1 && n < p.maxStreams {
			c.limit = n
		}
	}
	c.leases = make([]leaseState[T], p.maxStreams)
	c.free = make([]int32, p.maxStreams)
	for i := range c.leases {
		c.leases[i].c = c
		c.leases[i].slot = int32(i)
		if p.cfg.LeakThreshold > 0 {
			c.leases[i].leak = new(leakInfo)
		}
		c.free[i] = int32(p.maxStreams - 1 - i)
	}
	p.mux.mu.Lock()
	if p.closed.Load() {
		p.mux.mu.Unlock()
		p.disconnect(c, ReasonPoolClosed)
		return
	}
	if p.muxFullLocked() {
		// Dialled before a shrink: the pool has what its limit allows.
		p.mux.mu.Unlock()
		p.disconnect(c, ReasonResized)
		return
	}
	p.mux.conns = append(p.mux.conns, c)
	deliveries := p.takeStreamsForWaitersLocked(c)
	p.mux.mu.Unlock()
	deliver(deliveries)
}

// takeStreamsForWaitersLocked takes streams of c for waiters, oldest first, while c
// has room. The caller delivers the result after unlocking p.mux.mu.
func (p *Pool[T]) takeStreamsForWaitersLocked(c *conn[T]) []delivery[T] {
	var out []delivery[T]
	for !c.retiring && c.streams < c.limit && p.waiters.Load() > 0 {
		w := p.wq.popOldest()
		if w == nil {
			break
		}
		out = append(out, delivery[T]{w: w, l: c.takeStreamLocked()})
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

// retire stops c from taking new leases; it closes when its last lease ends.
func (p *Pool[T]) retire(c *conn[T]) {
	if !p.multiplexed {
		c.retired.Store(int32(ReasonRetired))
		return
	}
	p.mux.mu.Lock()
	if !c.retiring {
		c.retiring, c.reason = true, ReasonRetired
	}
	p.mux.mu.Unlock()
}

// setStreamLimit changes how many leases c serves at once.
func (p *Pool[T]) setStreamLimit(c *conn[T], n int) {
	if !p.multiplexed || n < 1 {
		return
	}
	p.mux.mu.Lock()
	c.limit = min(n, p.maxStreams)
	deliveries := p.takeStreamsForWaitersLocked(c)
	p.mux.mu.Unlock()
	deliver(deliveries)
}

// muxRetireAll retires every connection for reason (unless it is retiring
// already) and closes those with no lease now; the others close when their
// last lease ends.
func (p *Pool[T]) muxRetireAll(reason Reason) {
	p.mux.mu.Lock()
	var idle []*conn[T]
	for i := 0; i < len(p.mux.conns); i++ {
		c := p.mux.conns[i]
		if !c.retiring {
			c.retiring, c.reason = true, reason
		}
		if c.streams == 0 {
			p.mux.removeLocked(i)
			i--
			idle = append(idle, c)
		}
	}
	p.mux.mu.Unlock()
	for _, c := range idle {
		p.disconnect(c, c.reason)
	}
}

// stats fills the gauges of s.
func (m *muxSet[T]) stats(s *Stats) {
	m.mu.Lock()
	defer m.mu.Unlock()
	for _, c := range m.conns {
		s.TotalConns++
		s.Acquires += c.handouts()
		s.Leases += c.streams
		if c.streams > 0 {
			s.InUseConns++
		} else {
			s.IdleConns++
		}
	}
}

// leases counts the leases held now.
func (m *muxSet[T]) leases() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, c := range m.conns {
		n += c.streams
	}
	return n
}

func (m *muxSet[T]) inUse() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, c := range m.conns {
		if c.streams > 0 {
			n++
		}
	}
	return n
}
