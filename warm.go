package shoal

import (
	"context"
	"errors"
	"time"
)

// Warm dials until max(MinIdle, MinConns) connections are open (counting
// those already open and those being dialled, not those being closed), and
// waits for them. Its
// dials and the pool's own are held together to MaxDialing at a time.
// It returns the first dial error, or ctx's error if ctx ends first. A dial
// that ctx cuts short is no failure of the server: it leaves the pool's
// record of failing dials (on which its callers may fail at once) alone.
func (p *Pool[T]) Warm(ctx context.Context) error {
	if p.hot.closed.Load() {
		return ErrClosed
	}
	target := p.warmTarget()
	need := target - p.cap.serving()
	if need <= 0 {
		return p.waitBackgroundDials(ctx)
	}
	// The dials end with ctx or with the pool, as background dials do.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(p.life.ctx, cancel)()
	errs := make(chan error, need)
	started := 0
	var first error
	for started < need {
		// Counted as dialing under cap.mu, and held to MaxDialing with
		// the pool's other dials in flight, like every dial (startDialIf).
		p.cap.mu.Lock()
		wanted := !p.hot.closed.Load() && p.cap.serving() < target
		full := p.cap.dialing.Load() >= p.feat.maxDialing
		ok := wanted && !full && p.cap.reserve()
		if ok {
			p.cap.dialing.Add(1)
		}
		p.cap.mu.Unlock()
		if wanted && full {
			// Until a dial ends, Warm's or the pool's. Nothing tells
			// Warm when, so it looks again a moment later.
			select {
			case <-ctx.Done():
				first = ctx.Err()
			case <-time.After(warmPoll):
				continue
			}
		}
		if !ok {
			break
		}
		started++
		go func() {
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

// warmPoll is how often Warm looks at the dials in flight, when it waits
// for them to end: Warm is rare, and polling keeps the dial path free of it.
const warmPoll = time.Millisecond

// waitBackgroundDials waits until Warm's target of connections is open or
// no dial is in flight, and returns the last dial error if they fell short.
func (p *Pool[T]) waitBackgroundDials(ctx context.Context) error {
	for {
		dialing := p.cap.dialing.Load()
		if dialing == 0 || p.cap.serving()-int(dialing) >= p.warmTarget() {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(warmPoll):
		}
	}
	if p.cap.serving() < p.warmTarget() {
		return p.lastDialError()
	}
	return nil
}
