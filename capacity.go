package shoal

import (
	"fmt"
	"sync"
	"sync/atomic"
)

// capacity is how many connections the pool may open and how many it has
// open, being dialled and being closed: what every decision to dial or to
// close for the limit reads. Those decisions are made under mu, so that two
// deciders (waiters, refill, Warm, racing releasers after a shrink) never
// act twice on one need, and Close, which sets closed under it too, sees
// every dial either counted or refused.
type capacity struct {
	mu sync.Mutex

	open    atomic.Int32 // connections open or being dialled; never above limit but after a shrink
	dialing atomic.Int32 // dials in flight
	closing atomic.Int32 // closes running on goroutines of their own (Pool.closeConn)
	// up counts the connections that may serve a caller: dialled, not yet
	// let go to a close or a Hijack. It is kept apart from open, dialing
	// and closing, whose changes come in pairs, so that one load reads it:
	// a decision to fail waiters because nothing is up must never see a
	// connection between a pair's two writes.
	up atomic.Int32

	maxConns atomic.Int32 // Config.InitialMaxConns or MaxConns, or what SetMaxConns set last
	share    atomic.Int32 // the Budget's share; maxConnsLimit without a Budget
	limit    atomic.Int32 // min(maxConns, share): what dials are held to

	// shrinking counts closes under way because the pool was above its
	// limit (claimExcess); open minus shrinking is what a shrink still has
	// to close. Guarded by mu.
	shrinking int32
}

// reserve takes a place under the limit, or reports that the pool is full.
func (c *capacity) reserve() bool {
	for {
		n := c.open.Load()
		if n >= c.limit.Load() {
			return false
		}
		if c.open.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// established counts the open connections that may serve a caller: not
// dials in flight, not connections closing.
func (c *capacity) established() int32 { return c.up.Load() }

// landed counts a dial that succeeded: its connection is up, and the dial
// no longer in flight.
func (c *capacity) landed() {
	c.up.Add(1)
	c.dialing.Add(-1)
}

// serving counts the connections open or being dialled, not those being
// closed: these hold their place in MaxConns until their Close returns,
// and serve nobody.
func (c *capacity) serving() int { return int(c.open.Load() - c.closing.Load()) }

// nothingCanServe reports whether no connection is open (or closing, which
// frees a place for a dial) and no dial is in flight.
func (c *capacity) nothingCanServe() bool { return c.serving() <= 0 }

// SetMaxConns changes the most connections the pool opens at once, counting
// those being dialled, while it runs. Growing lets waiters be served by new
// dials at once. Shrinking stops dials, closes idle connections above n at
// once (ReasonResized) and leased ones as they are released, and never fails
// an acquire: callers wait, within their context, until the pool is back
// under n and a connection comes free. Until then more than n can be open,
// never more than the larger of the old and the new limit. MinIdle and
// MinConns are kept only up to the limit. With a Budget the pool opens at
// most the smaller of n and its share. Calls racing each other leave the
// pool at the limit of the one that takes effect last, which is not
// necessarily the last to return: once they have returned, Stats.MaxConns
// reports that limit and the pool keeps to it. n must be in
// [1, math.MaxInt32].
func (p *Pool[T]) SetMaxConns(n int) error {
	if n < 1 || n > maxConnsLimit {
		return fmt.Errorf("shoal pool %q: SetMaxConns(%d): must be in [1, %d]", p.cfg.Name, n, maxConnsLimit)
	}
	if p.hot.closed.Load() {
		return fmt.Errorf("shoal pool %q: SetMaxConns(%d): %w", p.cfg.Name, n, ErrClosed)
	}
	p.cap.mu.Lock()
	p.cap.maxConns.Store(int32(n))
	p.cap.mu.Unlock()
	p.applyLimit()
	return nil
}

// setShare is SetMaxConns for the Budget's share: n may be 0, when the
// budget has nothing for this pool.
func (p *Pool[T]) setShare(n int) {
	n = min(max(n, 0), maxConnsLimit)
	p.cap.mu.Lock()
	p.cap.share.Store(int32(n))
	p.cap.mu.Unlock()
	if !p.hot.closed.Load() {
		p.applyLimit()
	}
}

// applyLimit makes the limit min(maxConns, share) and acts on a change:
// dials for waiters, the floors and busy multiplexed connections after a
// rise, closes after a fall. Only exclusive mode closes connections above
// the limit as they come back (claimExcess); a multiplexed pool retires
// its least-loaded ones instead (its engine's shrink).
func (p *Pool[T]) applyLimit() {
	c := &p.cap
	c.mu.Lock()
	old := c.limit.Load()
	limit := min(c.maxConns.Load(), c.share.Load())
	c.limit.Store(limit)
	over := !p.feat.multiplexed && c.open.Load()-c.shrinking > limit
	p.hot.over.Store(over)
	c.mu.Unlock()
	switch {
	case limit < old || over:
		p.eng.shrink()
	case limit > old:
		p.maybeDial()
		p.refill()
		// A multiplexed pool whose busy connections asked for a share to
		// dial beside them (dialAhead) dials now that it has one: nothing
		// else would until the next lease found them busy.
		if m, ok := p.eng.(*muxEngine[T]); ok && m.allBusy() {
			p.dialAhead()
		}
	}
}

// claimExcess reports whether a connection coming back (released, passed
// on, newly dialled or idle) must close because more are open than the
// limit allows, and if so counts that close as under way and marks c, so
// that releasers racing each other close only as many as the limit asks.
// Called only while the pool is over its limit (hot.over): a pool that
// never shrinks never takes the lock.
func (p *Pool[T]) claimExcess(c *conn[T]) bool {
	cp := &p.cap
	cp.mu.Lock()
	defer cp.mu.Unlock()
	excess := cp.open.Load() - cp.shrinking - cp.limit.Load()
	if excess <= 1 {
		p.hot.over.Store(false) // this close, if any, is the last one needed
	}
	if excess <= 0 {
		return false
	}
	cp.shrinking++
	c.excess = true
	return true
}

// closedExcess is the end of a close that claimExcess counted: it leaves
// the count of closes under way and the count of open connections together,
// so that no decider sees one without the other.
func (c *capacity) closedExcess() {
	c.mu.Lock()
	c.shrinking--
	c.open.Add(-1)
	c.mu.Unlock()
}
