package shoal

import (
	"context"
	"errors"
	"math"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal/internal/failrun"
)

// downAfter is how long dials may fail, without a success in between,
// before the pool counts its server as down and fails every waiter with the
// dial's error at once. Before that a failure may be a blip (one refused
// connect, a connection reset), and a caller whose deadline leaves room for
// the next try waits for it. The server counts as down as soon as the next
// try would come after downAfter, so at failrun's backoff a caller waits for
// at most four tries (70ms) before it gets the error. A pool that has never
// opened a connection, or whose dial failed permanently, counts its server
// as down at the first failure: there is nothing to wait through.
const downAfter = 100 * time.Millisecond

// dialState is the pool's memory of recent dials, guarded by mu.
type dialState struct {
	mu           sync.Mutex
	failingSince int64 // pool clock at which the first failed dial since the last success started; 0 after a success
	// run is the failures since the last success, for the backoff, the
	// log and the last error (run.Err, nil after a success): it also
	// counts failures that do not count towards the server being down
	// (ErrPermitRefused).
	run failrun.Run
	// backoffUntil is run.Until, the pool clock before which no
	// background dial starts. Written under mu, read without it by
	// startDialIf.
	backoffUntil atomic.Int64
	// connected: a dial has succeeded. Until then a failure is not a blip
	// to wait through: nothing says the server was ever there.
	connected bool
}

// down reports whether the server counts as down: dials are failing, and
// they fail for good (ErrPermanent), or the pool never connected, or they
// will have failed for downAfter by the next try. d.mu must be held.
func (d *dialState) down() bool {
	if d.failingSince == 0 {
		return false
	}
	return d.run.Permanent() || !d.connected || d.backoffUntil.Load()-d.failingSince >= int64(downAfter)
}

// maybeDial starts background dials while more callers wait than the dials
// in flight will serve, within MaxConns, MaxDialing and the backoff. A
// multiplexed connection serves up to MaxStreams waiters, so one dial covers
// that many.
func (p *Pool[T]) maybeDial() {
	perDial := int64(p.feat.maxStreams)
	needed := func() bool { return int64(p.hot.waiters.Load()) > int64(p.cap.dialing.Load())*perDial }
	// The first test keeps this cheap when the pool is full: no lock. The
	// need is judged again under cap.mu, so that two waiters arriving
	// together do not both dial for a need one dial covers.
	for p.cap.open.Load() < p.cap.limit.Load() && needed() {
		if !p.startDialIf(needed) {
			return
		}
	}
}

// dialAhead starts a background dial, unless one is in flight, for a
// multiplexed pool whose every open connection is busy (BusyStreams): the
// new connection takes the load the busy ones would otherwise pile up.
// Nobody waits for it; it joins the open connections when it is up.
func (p *Pool[T]) dialAhead() {
	if p.cap.dialing.Load() != 0 {
		return
	}
	if p.cap.open.Load() >= p.cap.limit.Load() {
		p.askBudget()
		return
	}
	p.startDialIf(func() bool { return p.cap.dialing.Load() == 0 })
}

// mayOpenAnother reports whether a caller who finds only held-up
// connections (Config.Avoid) may wait for a new one instead: a dial is in
// flight, or one may start now (below the limit, or at a Budget share
// below MaxConns with a Budget that divides again when asked, and not
// backing off). The ask goes by demand, so it counts only when the leases
// held (leases, read under the engine's lock) and the waiters, with this
// caller, come to more connections than the share: otherwise the division
// gives no more, and the caller would wait for nothing. That the wait queue
// has room for the caller is its caller's to know (wait). The wait ends at
// whichever comes first: the new connection or a stream freed on any
// connection.
func (p *Pool[T]) mayOpenAnother(leases int, wait waitPlace) bool {
	c := &p.cap
	switch {
	case c.dialing.Load() > 0:
		return true
	case p.now() < p.dial.backoffUntil.Load():
		return false
	case c.open.Load() < c.limit.Load():
		return true
	}
	if _, asker := p.link.budget.(BudgetAsker); !asker || c.limit.Load() >= c.maxConns.Load() {
		return false
	}
	waiting := int(p.hot.waiters.Load())
	if wait == joinsQueue {
		waiting++
	}
	return p.demandFrom(leases, waiting) > int(c.limit.Load())
}

// dialForWaiter is maybeDial for a caller that has just joined the queue.
// While the pool backs off, the dial that serves it is maintenance's, once
// the backoff ends; maintenance may have gone to sleep for a full tick with
// nobody waiting, and is woken to sleep only until then. A pool at its
// Budget share asks the budget for a division (askBudget).
func (p *Pool[T]) dialForWaiter() {
	p.maybeDial()
	if p.hot.waiters.Load() <= p.cap.dialing.Load() {
		return
	}
	if p.now() < p.dial.backoffUntil.Load() {
		p.kickMaintenance()
	}
	p.askBudget()
}

// askBudget asks the pool's Budget to divide its connections now, where it
// can (BudgetAsker), when the pool's share alone, below MaxConns, holds
// back a dial the pool wants.
func (p *Pool[T]) askBudget() {
	c := &p.cap
	if a, ok := p.link.budget.(BudgetAsker); ok && c.open.Load() >= c.limit.Load() && c.limit.Load() < c.maxConns.Load() {
		a.AskShare()
	}
}

// startDialIf starts one background dial if the limits allow it and wanted
// (when not nil) still says the dial is needed. Both are judged under
// cap.mu, where every dial is counted before the lock is let go, so two
// deciders (refill, Warm, waiters) never dial twice for one need.
func (p *Pool[T]) startDialIf(wanted func() bool) bool {
	p.cap.mu.Lock()
	if p.hot.closed.Load() || p.cap.dialing.Load() >= p.feat.maxDialing || p.now() < p.dial.backoffUntil.Load() ||
		(wanted != nil && !wanted()) || !p.cap.reserve() {
		p.cap.mu.Unlock()
		return false
	}
	p.cap.dialing.Add(1)
	p.cap.mu.Unlock()
	go p.dialAndAdopt()
	return true
}

// dialAndAdopt runs one background dial and hands its result on: the new
// connection to the oldest waiter (or the idle stacks), or the error to the
// waiters who would otherwise sit until their deadline.
func (p *Pool[T]) dialAndAdopt() {
	c, started, err := p.dialOne(p.life.ctx)
	if err != nil {
		// Recorded (and logged) while the dial still counts: Close
		// waits for it, so no line comes after Close has returned, and
		// a maybeDial meanwhile sees the backoff. Then the place, then
		// the dial: in between, maybeDial sees the dial still in flight
		// and does not start another for the place this one gives back.
		down, nextTry := p.recordDialFailure(err, started, true)
		p.cap.open.Add(-1)
		p.cap.dialing.Add(-1)
		p.dialFailed(err, down, nextTry)
		return
	}
	p.adopt(c)
	if p.hot.closed.Load() {
		p.checkDrained() // adopt closed it; Close waits for this goroutine too
		return
	}
	// Waiters this dial did not serve may need the next one, which
	// MaxDialing held back. Not for a waiter about to take an idle
	// connection (one that enqueued as this one went idle): a multiplexed
	// connection whose own stream limit is low may have served fewer
	// waiters than its dial was counted for.
	if w := p.hot.waiters.Load(); w > 0 && (p.feat.multiplexed || int(w) > p.idleCount()) {
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
// the caller. It counts the dial and records its outcome. started is the
// pool clock when the connect began, after any wait for a budget permit: a
// failure run (dialState.failingSince) counts from there, since the wait
// was for another pool to let a connection go, not the server failing.
func (p *Pool[T]) dialOne(ctx context.Context) (c *conn[T], started int64, err error) {
	p.counters.dials.Add(1)
	var permit BudgetPermit
	if p.link.budget != nil {
		// Before DialTimeout starts, for the same reason.
		asked := time.Now()
		if ctx, permit, err = p.acquirePermit(ctx); err != nil {
			// A failed dial like any other, in Stats and to the Observer
			// alike, so that metrics and the live page see what Stats
			// counts.
			if p.obs != nil {
				p.obs.ObserveDial(time.Since(asked), err)
			}
			p.counters.dialErrors.Add(1)
			return nil, p.now(), &dialError{err: err}
		}
	}
	started = p.now()
	if p.cfg.DialTimeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, p.cfg.DialTimeout)
		defer cancel()
	}
	start := time.Now()
	gen := p.life.resets.Load() // before the connect: see dialledBeforeReset
	value, err := p.callDial(ctx)
	if err == nil && p.cfg.Hooks.OnConnect != nil {
		if err = p.callOnConnect(ctx, value); err != nil {
			p.counters.countLeft(ReasonRejected)
			c := &conn[T]{value: value, pool: p}
			if p.cfg.Hooks.OnDisconnect != nil {
				p.callOnDisconnect(c, ReasonRejected)
			}
			if p.cfg.Close != nil {
				_ = p.callClose(c)
			}
			// A close like any other (OnDisconnect was told so), counted
			// where the others are, so that Stats.Closed and the
			// Observer's closes match the Close calls; it also counts in
			// DialErrors below, as a failed dial.
			p.counters.closed.Add(1)
			if p.obs != nil {
				p.obs.ObserveClose(ReasonRejected)
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
		return nil, started, &dialError{err: err}
	}
	p.dialSucceeded()
	c = &conn[T]{value: value, pool: p, createdAt: p.now(), permit: permit, gen: gen}
	if r, ok := permit.(revocablePermit); ok {
		r.OnRevoke(func() { p.eng.retire(c, ReasonRevoked) })
	}
	if p.cfg.MaxLifetime > 0 {
		// Saturated: a MaxLifetime near math.MaxInt64 means "for ever",
		// not an expiry in the past.
		c.expiresAt = c.createdAt + min(p.lifetime(), math.MaxInt64-c.createdAt)
	}
	p.logOpened(c, time.Since(start))
	return c, started, nil
}

// lifetime draws one connection's lifetime from
// [MaxLifetime, MaxLifetime+LifetimeJitter], uniformly, as pgxpool does, so
// connections opened together do not expire together and none lives less
// than MaxLifetime. The sum saturates: a lifetime near math.MaxInt64 means
// "for ever".
func (p *Pool[T]) lifetime() int64 {
	life := int64(p.cfg.MaxLifetime)
	if j := int64(p.cfg.LifetimeJitter); j > 0 {
		extra := rand.Int64N(min(j, math.MaxInt64-1) + 1)
		life += min(extra, math.MaxInt64-life)
	}
	return max(life, 1)
}

// adopt gives a freshly dialled connection to its engine, which hands it
// out. The dial stops counting in capacity.dialing once the connection is counted
// elsewhere (in the slot table, or the multiplexed set) and before a waiter
// can have it: counted in neither, refill would dial again for it; in both,
// a waiter that got it would see it twice in Stats.
func (p *Pool[T]) adopt(c *conn[T]) {
	if p.hot.closed.Load() {
		p.cap.landed()
		p.closeConn(c, ReasonPoolClosed)
		return
	}
	if p.feat.clockOnIdle {
		c.idleSince.Store(p.now())
	}
	p.eng.adopt(c)
}

// dialSucceeded forgets the failures before it, and logs their end if
// their start was logged.
func (p *Pool[T]) dialSucceeded() {
	p.dial.mu.Lock()
	d := &p.dial
	d.connected = true
	d.failingSince = 0
	line := d.run.Succeed(p.now())
	d.backoffUntil.Store(0)
	p.dial.mu.Unlock()
	line.Log(p.cfg.Logger)
}

// dialFailed acts on a failed background dial once its place in MaxConns is
// given back, with down and nextTry as recordDialFailure returned them: it
// fails the waiters who can no longer be served in time. Once the server
// counts as down (dialState.down) and no connection is open to serve them,
// every waiter gets the error at once, even while other dials are in flight:
// those are probes of a server that is down, not a connection about to
// arrive. Before that, while nothing is open and no other dial is in flight,
// nothing can come to a waiter before the next try, after the backoff: a
// waiter whose deadline comes sooner gets the error now instead of sitting
// until then, and one with time left waits for the try. With a connection
// open, or another dial in flight, the others stay: a release or that dial
// will serve them, and if none does in time their error names this dial's
// failure.
func (p *Pool[T]) dialFailed(err error, down bool, nextTry int64) {
	switch {
	case down && p.cap.established() <= 0:
		p.wq.failAll(err, false)
	case p.cap.nothingCanServe():
		p.wq.failDeadlinesBefore(nextTry, err)
	}
	p.capacityFreed()
	// Callers left to wait for a new connection rather than take a held-up
	// one (Config.Avoid) take the held-up one now, if the pool is backing
	// off, as a caller arriving now would.
	if m, ok := p.eng.(*muxEngine[T]); ok {
		m.serveHeldUp()
	}
	// Whoever still waits is served by a release, or by the maintenance
	// goroutine's next dial once the backoff has passed.
	p.kickMaintenance()
}

// recordDialFailure counts a failed dial that started at started (pool
// clock), logs it if it is the first of a run or a while has passed since
// the last line (failrun), and, with backoff set, backs the background
// dials off. It returns whether the server now counts as down and when the
// next background dial may start.
func (p *Pool[T]) recordDialFailure(err error, started int64, backoff bool) (down bool, nextTry int64) {
	p.dial.mu.Lock()
	d := &p.dial
	permanent := errors.Is(err, ErrPermanent)
	// A dial that started long after the last failure (nobody needed one
	// in between) begins a new run of failures: the server is down only if
	// dials kept failing one after another for downAfter. The run starts
	// when its first dial did: a connect that hung for a second before it
	// failed is a second of failing. A refused permit says the server
	// answered: it starts no run, and ends a stale one, though the log
	// counts it.
	stale, line := d.run.Fail(failrun.Failure{Err: err, Permanent: permanent, Started: started, At: p.now()}, backoff)
	switch {
	case errors.Is(err, ErrPermitRefused):
		if stale {
			d.failingSince = 0
		}
	case d.failingSince == 0 || stale:
		d.failingSince = started
	}
	d.backoffUntil.Store(d.run.Until())
	down, nextTry = d.down(), d.backoffUntil.Load()
	p.dial.mu.Unlock()
	// A dial that Close cut short, or that failed once the pool was
	// closed, says nothing about the server that anyone still waits on.
	if !p.hot.closed.Load() {
		line.Log(p.cfg.Logger)
	}
	return down, nextTry
}

// failFast returns the last dial error for an acquire that could only sit
// until its deadline. With no connection open, a server that counts as down
// (dialState.down) fails the caller at once, even while a dial is in flight
// (a probe, which would keep the caller waiting as long as a silent server
// lets a connect hang), and the caller starts the next probe if the backoff
// has passed. Before that it fails only a caller that nothing can serve
// before the next try: no dial in flight, and its deadline before the try.
func (p *Pool[T]) failFast(ctx context.Context) error {
	if p.cap.established() > 0 {
		return nil // a release may serve the caller
	}
	now := p.now()
	p.dial.mu.Lock()
	lastErr, nextTry, down := p.dial.run.Err(), p.dial.backoffUntil.Load(), p.dial.down()
	p.dial.mu.Unlock()
	switch {
	case lastErr == nil:
		return nil
	case down:
		if now >= nextTry && p.cap.dialing.Load() == 0 {
			p.startDialIf(nil) // is the server back?
		}
	case !p.cap.nothingCanServe() || now >= nextTry || p.deadline(ctx) >= nextTry:
		return nil // a blip, and a dial in flight or the next try may serve the caller
	}
	p.counters.dialFailed.Add(1)
	return p.acquireError(lastErr, 0)
}

// downError returns the last dial's error when the server counts as down
// and no connection is up, nil otherwise: the state in which failFast fails
// a newcomer at once, for callers already in the queue.
func (p *Pool[T]) downError() error {
	if p.cap.established() > 0 {
		return nil
	}
	p.dial.mu.Lock()
	defer p.dial.mu.Unlock()
	if err := p.dial.run.Err(); err != nil && p.dial.down() {
		return err
	}
	return nil
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
	return p.dial.run.Err()
}
