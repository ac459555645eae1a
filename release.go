package shoal

import "time"

// release takes back a lease whose holder called Release (reason 0) or
// Discard (ReasonDiscarded), or that the leak reclaimer took back
// (ReasonLeaked). The lease's held bit is already cleared. From here the
// path goes straight down: the engine's release, then its put back or its
// close.
func (p *Pool[T]) release(r *leaseRecord[T], reason Reason) {
	if p.feat.plain && reason == 0 {
		// Nothing to run or record: only the pool's and the connection's
		// own reasons to close it, and the exclusive engine, directly.
		c := r.c
		switch {
		case p.hot.closed.Load():
			p.ex.close(c, ReasonPoolClosed)
		case c.retired.Load() != 0:
			p.ex.close(c, Reason(c.retired.Load()))
		default:
			p.ex.putBackReleased(r)
		}
		return
	}
	if p.obs != nil {
		p.obs.ObserveRelease(time.Duration(p.now() - r.acquiredAt.Load()))
	}
	p.eng.release(r, reason)
}
