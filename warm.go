package shoal

import (
	"context"
	"errors"
	"time"
)

// Warm dials until max(MinIdle, MinConns) connections are open (counting
// those already open and those being dialled), MaxDialing at a time, and
// waits for them.
// It returns the first dial error, or ctx's error if ctx ends first. A dial
// that ctx cuts short is no failure of the server: it leaves the pool's
// record of failing dials (on which its callers may fail at once) alone.
func (p *Pool[T]) Warm(ctx context.Context) error {
	if p.hot.closed.Load() {
		return ErrClosed
	}
	target := p.warmTarget()
	need := target - int(p.cap.open.Load())
	if need <= 0 {
		return p.waitBackgroundDials(ctx)
	}
	// The dials end with ctx or with the pool, as background dials do.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(p.life.ctx, cancel)()
	sem := make(chan struct{}, p.feat.maxDialing)
	errs := make(chan error, need)
	started := 0
	for ; started < need; started++ {
		sem <- struct{}{}
		// Counted as dialing under cap.mu, like every dial (startDialIf).
		p.cap.mu.Lock()
		ok := !p.hot.closed.Load() && int(p.cap.open.Load()) < target && p.cap.reserve()
		if ok {
			p.cap.dialing.Add(1)
		}
		p.cap.mu.Unlock()
		if !ok {
			<-sem
			break
		}
		go func() {
			defer func() { <-sem }()
			c, started, err := p.dialOne(ctx)
			if err != nil {
				// Recorded while it counts, then the place, then the
				// dial: see dialAndAdopt. Warm's caller gets the error,
				// so no waiter is failed for it and no backoff starts:
				// the background dials back off on their own failures.
				// Not recorded at all when Warm's context cut it short:
				// that is the caller giving up, and on a pool never
				// connected it would fail the next callers at once.
				if ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
					p.recordDialFailure(err, started, false)
				}
				p.cap.open.Add(-1)
				p.cap.dialing.Add(-1)
				p.capacityFreed()
				errs <- err
				return
			}
			p.adopt(c)
			if p.hot.closed.Load() {
				p.checkDrained()
			}
			errs <- nil
		}()
	}
	var first error
	for range started {
		if err := <-errs; err != nil && first == nil {
			first = err
		}
	}
	if first == nil {
		// The maintenance goroutine may have started some of the floor's
		// dials before we looked: wait for those too, so that Warm returns
		// with the connections open, not merely on their way.
		first = p.waitBackgroundDials(ctx)
	}
	if p.hot.closed.Load() {
		return ErrClosed // closed while warming: what was dialled is closed too
	}
	if first != nil && ctx.Err() != nil && errors.Is(first, ctx.Err()) {
		return ctx.Err()
	}
	return first
}

// waitBackgroundDials waits until Warm's target of connections is open or
// no dial is in flight, and returns the last dial error if they fell short.
func (p *Pool[T]) waitBackgroundDials(ctx context.Context) error {
	const poll = time.Millisecond // Warm is rare; polling keeps the dial path free of it
	for {
		dialing := p.cap.dialing.Load()
		if dialing == 0 || int(p.cap.open.Load()-dialing) >= p.warmTarget() {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
	if int(p.cap.open.Load()) < p.warmTarget() {
		return p.lastDialError()
	}
	return nil
}
