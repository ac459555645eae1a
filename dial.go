package shoal

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"time"
)

// Dial backoff: after a failed dial the pool waits before it dials again for
// waiters, MinIdle or MinConns, doubling from backoffMin up to backoffMax.
// The cap is low so that a pool is back to strength within a second of its
// server.
const (
	backoffMin = 10 * time.Millisecond
	backoffMax = 250 * time.Millisecond
)

// downAfter is how long dials must have failed without a success before the
// pool counts its server as down and fails every waiter with the dial's
// error at once. Before that a failure may be a blip (one refused connect, a
// restart, a failover's promotion), and a caller whose deadline leaves room
// for the next try waits for it. At the backoff above, a second of failures
// is about eight tries.
const downAfter = time.Second

// streakGap is the longest a dial may start after the previous failure and
// still count as retrying it: the backoff's cap, and as much again for a
// maintenance pass that ran late.
const streakGap = 2 * backoffMax

// dialState is the pool's memory of recent dials, guarded by mu.
type dialState struct {
	mu           sync.Mutex
	lastErr      error // nil after a success
	lastErrAt    int64 // pool clock
	failingSince int64 // pool clock of the first failure since the last success; 0 after a success
	backoff      time.Duration
	backoffUntil int64 // pool clock; no background dial before it

	// shrinking counts closes under way because the pool was above its
	// limit (resize.go); open minus shrinking is what a shrink still has
	// to close.
	shrinking int32
}

// downAt reports whether, at now, dials have failed for downAfter without a
// success: the server counts as down. d.mu must be held.
func (d *dialState) downAt(now int64) bool {
	return d.failingSince != 0 && now-d.failingSince >= int64(downAfter)
}

// reserve takes a place in MaxConns, or reports that the pool is full.
func (p *Pool[T]) reserve() bool {
	for {
		n := p.open.Load()
		if n >= p.limit.Load() {
			return false
		}
		if p.open.CompareAndSwap(n, n+1) {
			return true
		}
	}
}

// maybeDial starts background dials while more callers wait than the dials
// in flight will serve, within MaxConns, MaxDialing and the backoff. A
// multiplexed connection serves up to MaxStreams waiters, so one dial covers
// that many.
func (p *Pool[T]) maybeDial() {
	perDial := int64(p.maxStreams)
	needed := func() bool { return int64(p.waiters.Load()) > int64(p.dialing.Load())*perDial }
	// The first test keeps this cheap when the pool is full: no lock. The
	// need is judged again under dial.mu, so that two waiters arriving
	// together do not both dial for a need one dial covers.
	for p.open.Load() < p.limit.Load() && needed() {
		if !p.startDialIf(needed) {
			return
		}
	}
}

// startDialIf starts one background dial if the limits allow it and wanted
// (when not nil) still says the dial is needed. Both are judged under
// dial.mu, where every dial is counted before the lock is let go, so two
// deciders (refill, Warm, waiters) never dial twice for one need.
func (p *Pool[T]) startDialIf(wanted func() bool) bool {
	p.dial.mu.Lock()
	if p.closed.Load() || p.dialing.Load() >= p.maxDialing || p.now() < p.dial.backoffUntil ||
		(wanted != nil && !wanted()) || !p.reserve() {
		p.dial.mu.Unlock()
		return false
	}
	p.dialing.Add(1)
	p.dial.mu.Unlock()
	go p.dialAndAdopt()
	return true
}

// dialAndAdopt runs one background dial and hands its result on: the new
// connection to the oldest waiter (or the idle stacks), or the error to the
// waiters who would otherwise sit until their deadline.
func (p *Pool[T]) dialAndAdopt() {
	started := p.now()
	c, err := p.dialOne(p.ctx)
	if err != nil {
		p.dialing.Add(-1)
		p.open.Add(-1)
		p.dialFailed(err, started)
		return
	}
	p.adopt(c)
	if p.closed.Load() {
		p.checkDrained() // adopt closed it; Close waits for this goroutine too
		return
	}
	// A multiplexed connection whose own stream limit is low may have
	// served fewer waiters than its dial was counted for.
	if p.waiters.Load() > 0 {
		p.maybeDial()
	}
	// Still short of MinIdle or MinConns: the next dial starts now, as
	// this one ends, rather than at maintenance's next tick (up to a
	// second away), so that a floor of 32 fills at MaxDialing at a time
	// instead of MaxDialing a second.
	if p.keepsFloor() {
		p.refill()
	}
}

// dialOne dials under ctx (bounded by DialTimeout), runs OnConnect, and
// returns a connection that holds a place in MaxConns already reserved by
// the caller. It counts the dial and records its outcome.
func (p *Pool[T]) dialOne(ctx context.Context) (*conn[T], error) {
	p.counters.dials.Add(1)
	var permit BudgetPermit
	if p.budget != nil {
		// Before DialTimeout starts: waiting for a permit is waiting for
		// another pool to close a connection, not a slow server.
		var err error
		if ctx, permit, err = p.acquirePermit(ctx); err != nil {
			p.counters.dialErrors.Add(1)
			return nil, &dialError{err: err}
		}
	}
	if p.cfg.DialTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.cfg.DialTimeout)
		defer cancel()
	}
	start := time.Now()
	value, err := p.callDial(ctx)
	if err == nil && p.cfg.Hooks.OnConnect != nil {
		if err = p.callOnConnect(ctx, value); err != nil {
			c := &conn[T]{value: value, pool: p}
			if p.cfg.Hooks.OnDisconnect != nil {
				p.callOnDisconnect(c, ReasonRejected)
			}
			if p.cfg.Close != nil {
				_ = p.callClose(c)
			}
		}
	}
	if p.obs != nil {
		p.obs.ObserveDial(time.Since(start), err)
	}
	if err != nil {
		if permit != nil {
			permit.Release()
		}
		p.counters.dialErrors.Add(1)
		return nil, &dialError{err: err}
	}
	p.dialSucceeded()
	c := &conn[T]{value: value, pool: p, createdAt: p.now(), permit: permit}
	if r, ok := permit.(revocablePermit); ok {
		r.OnRevoke(func() { p.eng.revoke(c) })
	}
	if p.cfg.MaxLifetime > 0 {
		// Saturated: a MaxLifetime near math.MaxInt64 means "for ever",
		// not an expiry in the past.
		c.expiresAt = c.createdAt + min(p.lifetime(), math.MaxInt64-c.createdAt)
	}
	p.logOpened(c, time.Since(start))
	return c, nil
}

// lifetime draws one connection's lifetime from
// [MaxLifetime-LifetimeJitter, MaxLifetime], uniformly, so connections
// opened together do not expire together.
func (p *Pool[T]) lifetime() int64 {
	life := int64(p.cfg.MaxLifetime)
	if j := int64(p.cfg.LifetimeJitter); j > 0 {
		life -= rand.Int64N(min(j, math.MaxInt64-1) + 1)
	}
	return max(life, 1)
}

// adopt gives a freshly dialled connection a slot and hands it out. The
// dial stops counting in Pool.dialing once the connection is counted
// elsewhere (in the slot table, or the multiplexed set) and before a waiter
// can have it: counted in neither, refill would dial again for it; in both,
// a waiter that got it would see it twice in Stats.
func (p *Pool[T]) adopt(c *conn[T]) {
	if p.closed.Load() {
		p.dialing.Add(-1)
		p.disconnect(c, ReasonPoolClosed)
		return
	}
	if p.clockOnIdle {
		c.idleSince.Store(p.now())
	}
	p.eng.adopt(c)
}

func (p *Pool[T]) dialSucceeded() {
	p.dial.mu.Lock()
	p.dial.lastErr = nil
	p.dial.failingSince = 0
	p.dial.backoff = 0
	p.dial.backoffUntil = 0
	p.dial.mu.Unlock()
}

// dialFailed records a failed background dial and tells the waiters who can
// no longer be served in time. While nothing is open and no other dial is in
// flight, nothing can come to a waiter before the next try, after the
// backoff. A waiter whose deadline comes sooner gets the error now instead of
// sitting until then; one with time left waits for the try. Once dials have
// failed for downAfter the server counts as down, and every waiter gets the
// error at once. With a connection open, or another dial in flight, everyone
// stays: a release or that dial will serve them, and if none does in time
// their error names this dial's failure.
func (p *Pool[T]) dialFailed(err error, started int64) {
	p.dial.mu.Lock()
	now := p.now()
	// A dial that started long after the last failure (nobody needed one
	// in between) begins a new run of failures: the server is down only if
	// dials kept failing one after another for downAfter.
	if p.dial.failingSince == 0 || started-p.dial.lastErrAt > int64(streakGap) {
		p.dial.failingSince = now
	}
	p.dial.lastErr = err
	p.dial.lastErrAt = now
	down := p.dial.downAt(now)
	p.dial.backoff = min(max(2*p.dial.backoff, backoffMin), backoffMax)
	p.dial.backoffUntil = now + int64(p.dial.backoff)
	backoff, nextTry := p.dial.backoff, p.dial.backoffUntil
	p.dial.mu.Unlock()
	p.logDialFailed(err, backoff)

	if p.nothingCanServe() {
		if down {
			p.wq.failAll(err, false)
		} else {
			p.wq.failDeadlinesBefore(nextTry, err)
		}
	}
	p.capacityFreed()
	// Whoever still waits is served by a release, or by the maintenance
	// goroutine's next dial once the backoff has passed.
	p.kickMaintenance()
}

// nothingCanServe reports whether no connection is open (or closing, which
// frees a place for a dial) and no dial is in flight.
func (p *Pool[T]) nothingCanServe() bool { return p.open.Load()-p.closing.Load() <= 0 }

// failFast returns the last dial error for an acquire that could only sit
// until its deadline: nothing is open, no dial is in flight, the pool is
// backing off, and either the server counts as down (downAfter) or ctx's
// deadline comes before the next try.
func (p *Pool[T]) failFast(ctx context.Context) error {
	if !p.nothingCanServe() {
		return nil
	}
	now := p.now()
	p.dial.mu.Lock()
	lastErr, nextTry, down := p.dial.lastErr, p.dial.backoffUntil, p.dial.downAt(now)
	p.dial.mu.Unlock()
	if lastErr == nil || now >= nextTry {
		return nil
	}
	if !down && p.deadline(ctx) >= nextTry {
		return nil // a blip, and there is time for the next try
	}
	return &AcquireError{Err: lastErr, MaxConns: int(p.limit.Load())}
}

// deadline returns ctx's deadline on the pool clock, or math.MaxInt64 when
// it has none.
func (p *Pool[T]) deadline(ctx context.Context) int64 {
	d, ok := ctx.Deadline()
	if !ok {
		return math.MaxInt64
	}
	// Saturated: a deadline written as "never" (a timeout of
	// math.MaxInt64) must not wrap round into the past.
	now, left := p.now(), int64(time.Until(d))
	if left > math.MaxInt64-now {
		return math.MaxInt64
	}
	return now + left
}

// lastDialError returns the last dial's error, or nil if it succeeded.
func (p *Pool[T]) lastDialError() error {
	p.dial.mu.Lock()
	defer p.dial.mu.Unlock()
	return p.dial.lastErr
}

// Warm dials until max(MinIdle, MinConns) connections are open (counting
// those already open and those being dialled), MaxDialing at a time, and
// waits for them.
// It returns the first dial error, or ctx's error if ctx ends first.
func (p *Pool[T]) Warm(ctx context.Context) error {
	if p.closed.Load() {
		return ErrClosed
	}
	target := p.warmTarget()
	need := target - int(p.open.Load())
	if need <= 0 {
		return p.waitBackgroundDials(ctx)
	}
	// The dials end with ctx or with the pool, as background dials do.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(p.ctx, cancel)()
	sem := make(chan struct{}, p.maxDialing)
	errs := make(chan error, need)
	started := 0
	for ; started < need; started++ {
		sem <- struct{}{}
		// Counted as dialing under dial.mu, like every dial (startDialIf).
		p.dial.mu.Lock()
		ok := !p.closed.Load() && int(p.open.Load()) < target && p.reserve()
		if ok {
			p.dialing.Add(1)
		}
		p.dial.mu.Unlock()
		if !ok {
			<-sem
			break
		}
		go func() {
			defer func() { <-sem }()
			c, err := p.dialOne(ctx)
			if err != nil {
				p.dialing.Add(-1)
				p.open.Add(-1)
				p.dialFailedQuietly(err)
				errs <- err
				return
			}
			p.adopt(c)
			if p.closed.Load() {
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
	if p.closed.Load() {
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
		dialing := p.dialing.Load()
		if dialing == 0 || int(p.open.Load()-dialing) >= p.warmTarget() {
			break
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(poll):
		}
	}
	if int(p.open.Load()) < p.warmTarget() {
		return p.lastDialError()
	}
	return nil
}

// dialFailedQuietly records a failed Warm dial: Warm's caller gets the error,
// so waiters are not failed for it, and no backoff starts (Warm's caller
// decides when to try again; the background dials back off on their own
// failures).
func (p *Pool[T]) dialFailedQuietly(err error) {
	p.dial.mu.Lock()
	p.dial.lastErr = err
	p.dial.lastErrAt = p.now()
	p.dial.mu.Unlock()
	p.logDialFailed(err, 0)
	p.capacityFreed()
}
