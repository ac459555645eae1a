package shoal

import "fmt"

// SetMaxConns changes the most connections the pool opens at once, counting
// those being dialled, while it runs. Growing lets waiters be served by new
// dials at once. Shrinking stops dials, closes idle connections above n at
// once (ReasonResized) and leased ones as they are released, and never fails
// an acquire: callers wait, within their context, until the pool is back
// under n and a connection comes free. Until then more than n can be open,
// never more than the larger of the old and the new limit. MinIdle and
// MinConns are kept only up to the limit. With a Budget the pool opens at
// most the smaller of n and its share. n must be in [1, math.MaxInt32].
func (p *Pool[T]) SetMaxConns(n int) error {
	if n < 1 || n > maxConnsLimit {
		return fmt.Errorf("shoal: SetMaxConns(%d): must be in [1, %d]", n, maxConnsLimit)
	}
	if p.closed.Load() {
		return ErrClosed
	}
	p.dial.mu.Lock()
	p.maxConns.Store(int32(n))
	p.dial.mu.Unlock()
	p.applyLimit()
	return nil
}

// setShare is SetMaxConns for the Budget's share: n may be 0, when the
// budget has nothing for this pool.
func (p *Pool[T]) setShare(n int) {
	n = min(max(n, 0), maxConnsLimit)
	p.dial.mu.Lock()
	p.share.Store(int32(n))
	p.dial.mu.Unlock()
	if !p.closed.Load() {
		p.applyLimit()
	}
}

// applyLimit makes the limit min(maxConns, share) and acts on a change:
// dials for waiters and the floors after a rise, closes after a fall.
func (p *Pool[T]) applyLimit() {
	p.dial.mu.Lock()
	old := p.limit.Load()
	limit := min(p.maxConns.Load(), p.share.Load())
	p.limit.Store(limit)
	over := p.countsExcess && p.open.Load()-p.dial.shrinking > limit
	p.over.Store(over)
	p.dial.mu.Unlock()
	switch {
	case limit < old || over:
		p.eng.shrink()
	case limit > old:
		p.maybeDial()
		p.refill()
	}
}

// shrinkIdle closes idle connections while more are open than the limit
// allows. Leased ones close as they come back (see takeExcess's callers).
func (p *Pool[T]) shrinkIdle() {
	for p.over.Load() {
		c := p.ex.popIdle()
		if c == nil {
			return
		}
		if !p.takeExcess() {
			p.ex.repool(&c.lease)
			return
		}
		p.closeConn(c, ReasonResized)
	}
}

// takeExcess reports whether a connection coming back (released, passed on,
// newly dialled or idle) must close because more are open than the limit
// allows, and if so counts that close as under way, so that releasers racing
// each other close only as many as the limit asks. Called only while
// p.over is set: a pool that never shrinks never takes the lock.
func (p *Pool[T]) takeExcess() bool {
	p.dial.mu.Lock()
	defer p.dial.mu.Unlock()
	excess := p.open.Load() - p.dial.shrinking - p.limit.Load()
	if excess <= 1 {
		p.over.Store(false) // this close, if any, is the last one needed
	}
	if excess <= 0 {
		return false
	}
	p.dial.shrinking++
	return true
}

// closedForLimit is the end of a close that takeExcess counted: it leaves
// the count of closes under way and the count of open connections together,
// so that no decider sees one without the other.
func (p *Pool[T]) closedForLimit() {
	p.dial.mu.Lock()
	p.dial.shrinking--
	p.open.Add(-1)
	p.dial.mu.Unlock()
}
