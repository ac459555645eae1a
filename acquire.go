package shoal

import (
	"context"
	"errors"
	"runtime"
	"time"
)

// Acquire returns a lease on a connection, waiting if none is free until one
// is released, a dial completes, or ctx ends.
//
// The order of attempts: an idle connection from the caller's home
// partition, then from the other partitions, then (if MaxConns allows) a new
// connection dialled in the background while the caller waits in a
// first-come, first-served queue. When ctx ends first the error wraps
// ctx.Err(); when a dial fails while the caller waits it wraps the dial's
// error and ErrDial; when the pool closes it wraps ErrClosed.
func (p *Pool[T]) Acquire(ctx context.Context) (Lease[T], error) {
	if p.hot.closed.Load() {
		return Lease[T]{}, ErrClosed
	}
	if p.ex.barge != nil && p.ex.shortOfTime(ctx) {
		return p.acquireInTurn(ctx, 0)
	}
	if p.feat.plain {
		// The fast path: a pop from a lock-free stack and a store.
		if c := p.ex.popIdle(); c != nil {
			c.lease.handedAt = 0
			return c.lease.holdPlain(), nil
		}
	} else if p.feat.quickTake {
		// The same with the bookkeeping some features need.
		if c := p.ex.popIdle(); c != nil {
			c.lease.handedAt = 0
			l := p.hold(&c.lease)
			if p.feat.tracking {
				p.onAcquired(l, 0, true)
			}
			return l, nil
		}
	}
	return p.acquireSlow(ctx, 0)
}

// TryAcquire returns a lease if a connection is free now, and ErrWouldBlock
// otherwise; it never waits. When it finds nothing and MaxConns allows, it
// starts a dial in the background so that a later try can succeed.
func (p *Pool[T]) TryAcquire() (Lease[T], error) {
	l, err := p.TryAcquireIdle()
	if err == ErrWouldBlock && p.cap.dialing.Load() == 0 {
		p.startDialIf(nil)
	}
	return l, err
}

// Do acquires a connection, calls fn with it and releases it. When fn
// panics, or returns an error for which Config.Broken reports true, the
// connection is discarded instead; the panic goes on up. Do returns the
// acquire's error or fn's.
func (p *Pool[T]) Do(ctx context.Context, fn func(conn T) error) error {
	l, err := p.Acquire(ctx)
	if err != nil {
		return err
	}
	done := false
	defer func() {
		if !done {
			l.Discard()
		}
	}()
	err = fn(l.Value())
	done = true
	if err != nil && p.cfg.Broken != nil && p.callBroken(err) {
		l.Discard()
	} else {
		l.Release()
	}
	return err
}

// acquireSlow is everything after the fast path: checks, dials, the queue.
// pre is how long the caller had waited before it asked (AcquireSince), 0
// for Acquire.
func (p *Pool[T]) acquireSlow(ctx context.Context, pre int64) (Lease[T], error) {
	if err := ctx.Err(); err != nil {
		return Lease[T]{}, p.acquireError(err, time.Duration(pre))
	}
	wait := noWait
	if p.queueHasRoom() {
		wait = joinsQueue
	}
	if l := p.eng.take(ctx, wait); l.rec != nil {
		if pre > 0 {
			return p.acquiredEarlier(ctx, l, pre), nil
		}
		return p.acquired(l, 0, false), nil
	}
	if err := p.failFast(ctx); err != nil {
		return Lease[T]{}, err
	}
	if p.cfg.MinIdle > 0 && p.cap.open.Load() < p.cap.limit.Load() {
		// Nothing idle: below MinIdle for sure, and there is room to dial.
		// At MaxConns there is nothing refill could do, and a wake-up per
		// waiting acquire costs a maintenance pass each (BENCHMARKS.md).
		p.kickMaintenance()
	}
	return p.queueAs(ctx, false, pre)
}

// acquireInTurn is Acquire for a caller too short of time to barge
// (exclusiveEngine.shortOfTime): the idle connections go to the callers
// already waiting, and this one waits its turn behind them. pre is as for
// acquireSlow.
func (p *Pool[T]) acquireInTurn(ctx context.Context, pre int64) (Lease[T], error) {
	if err := ctx.Err(); err != nil {
		return Lease[T]{}, p.acquireError(err, time.Duration(pre))
	}
	p.ex.handOffIdle(nil)
	if p.hot.waiters.Load() == 0 {
		return p.acquireSlow(ctx, pre) // nobody left to wait behind
	}
	if err := p.failFast(ctx); err != nil {
		return Lease[T]{}, err
	}
	return p.queueAs(ctx, true, pre)
}

// queueAs waits in the wait queue (waitqueue.go) until a release or a dial
// hands the caller a lease that passes its checks, or ctx ends. inTurn
// (acquireInTurn) keeps the caller from taking an idle connection ahead of
// older waiters while it waits; pre is as for acquireSlow, and counts in
// the wait reported, not in the caller's place in the queue.
func (p *Pool[T]) queueAs(ctx context.Context, inTurn bool, pre int64) (Lease[T], error) {
	w := p.wq.get()
	defer p.wq.put(w)
	start := p.now()
	w.since = start
	w.inTurn = inTurn
	w.deadline = p.deadline(ctx)
	switch p.wq.enqueue(w, p.cfg.MaxWaiters) {
	case queueClosed:
		return Lease[T]{}, ErrClosed
	case queueFull:
		p.rejected()
		return Lease[T]{}, &AcquireError{Pool: p.cfg.Name, Err: p.life.errWaitersFull, MaxConns: int(p.cap.limit.Load()),
			InUse: p.inUse(), Waiting: int(p.hot.waiters.Load())}
	}
	if p.wq.tracer == nil {
		return p.await(ctx, w, start-pre)
	}
	began := time.Now().Add(-time.Duration(pre))
	l, err := p.await(ctx, w, start-pre)
	p.wq.tracer.TraceWait(ctx, began, time.Since(began), err)
	return l, err
}

// await is a queued waiter's side: it takes the lease a release or a dial
// hands it, checks it, and goes round again when the check fails, until
// ctx ends. start is when it began to wait (pool clock).
func (p *Pool[T]) await(ctx context.Context, w *waiter[T], start int64) (Lease[T], error) {
	for {
		// A release (or a dial) may have pushed a connection between our
		// last look and the enqueue without seeing us in the queue: look
		// once more, before asking for a dial that connection makes
		// needless. A caller waiting its turn gives what is idle to the
		// oldest waiters instead, itself among them.
		if w.inTurn {
			p.ex.handOffIdle(nil)
		} else if l := p.retake(ctx, w); l.rec != nil {
			return p.acquired(l, p.now()-start, true), nil
		}
		p.dialForWaiter()
		// A dial that failed between our failFast and our enqueue swept
		// the queue without us (dialFailed): look at the dials once more,
		// now that we are in it, as for an idle connection above.
		if err := p.downError(); err != nil && p.wq.remove(w) {
			return Lease[T]{}, p.handedError(err, p.now()-start)
		}
		h, waiting, ok := p.wq.wait(ctx, w)
		if !ok {
			if h.lease.rec != nil {
				p.passOn(h.lease.rec) // it came as we gave up
			}
			return Lease[T]{}, p.timedOut(ctx.Err(), p.now()-start, waiting)
		}
		if h.err != nil {
			return Lease[T]{}, p.handedError(h.err, p.now()-start)
		}
		l := h.lease
		if p.feat.quickTake {
			return p.acquired(l, p.now()-start, true), nil
		}
		reason, ok := p.check(ctx, l.rec.c, false, 0)
		if !ok && callerGone(ctx, reason) || ok && p.feat.ctxChecks && ctx.Err() != nil {
			// Our context ended during the check, or as the lease arrived,
			// perhaps from our own take handing back a connection it could
			// not check (only checks that use the context do that): pass
			// the lease on.
			p.passOn(l.rec)
			return Lease[T]{}, p.timedOut(ctx.Err(), p.now()-start, int(p.hot.waiters.Load())+1)
		}
		if ok {
			return p.acquired(l, p.now()-start, true), nil
		}
		p.counters.unused.Add(1)
		p.eng.closeTaken(l.rec, reason)
		// Back to our place in the queue, which still counts our wait from
		// start, and look at the stacks again, as after the first enqueue.
		if !p.wq.rejoin(w) {
			return Lease[T]{}, p.acquireError(ErrClosed, time.Duration(p.now()-start))
		}
	}
}

// acquiredEarlier records a successful AcquireSince served without
// joining the queue, whose caller had waited pre before it asked: as an
// acquire that waited, traced as one that waited in the queue is.
func (p *Pool[T]) acquiredEarlier(ctx context.Context, l Lease[T], pre int64) Lease[T] {
	if t := p.wq.tracer; t != nil {
		wait := time.Duration(pre)
		t.TraceWait(ctx, time.Now().Add(-wait), wait, nil)
	}
	return p.acquired(l, pre, true)
}

// passOn puts back a lease handed to a caller who no longer wants it (its
// context ended, or it took another): it goes to the next waiter or the
// free connections, and does not count as an acquire.
func (p *Pool[T]) passOn(r *leaseRecord[T]) {
	p.counters.unused.Add(1)
	p.eng.putBack(r)
}

// queueHasRoom reports whether a caller not yet queued would find room in
// the wait queue (MaxWaiters), as far as one reading tells.
func (p *Pool[T]) queueHasRoom() bool {
	return p.cfg.MaxWaiters <= 0 || int(p.hot.waiters.Load()) < p.cfg.MaxWaiters
}

// retake is a queued waiter's look at the free connections, for one a
// release put back without seeing the waiter in the queue. It returns the
// lease if it took one and left the queue; if someone is handing the waiter
// a lease already, the one it took is passed on. The waiter has its place
// in the queue already, so it may wait (MaxWaiters counts it).
func (p *Pool[T]) retake(ctx context.Context, w *waiter[T]) Lease[T] {
	l := p.eng.take(ctx, inQueue)
	if l.rec == nil {
		return l
	}
	if p.wq.remove(w) {
		return l
	}
	p.passOn(l.rec)
	return Lease[T]{}
}

// acquired records a successful acquire that waited wait (pool clock).
func (p *Pool[T]) acquired(l Lease[T], wait int64, waited bool) Lease[T] {
	if waited {
		p.eng.countWait(l.rec.c, wait)
	}
	if p.feat.tracking {
		p.onAcquired(l, time.Duration(wait), false)
	}
	return l
}

// onAcquired runs for every successful acquire when the pool tracks
// something about it: load shedding's wait statistics, the observer, and
// the acquiring stack for leak reports, or with tracing only as much of it
// as names the taker. fast says it was called from Acquire's fast path,
// where the frame two above it (Acquire's caller) is most often the
// taker's; elsewhere the pool's own frames lie between.
func (p *Pool[T]) onAcquired(l Lease[T], wait time.Duration, fast bool) {
	if p.shed != nil {
		p.shed.observe(int64(wait))
	}
	if li := l.rec.leak; li != nil {
		li.mu.Lock()
		li.gen = l.gen
		if p.feat.nameTaker {
			li.n = takerStack(li.pcs[:], 2, fast)
		} else {
			li.n = runtime.Callers(2, li.pcs[:])
		}
		li.mu.Unlock()
	}
	if p.obs != nil {
		p.obs.ObserveAcquire(wait)
	}
}

// timedOut records an acquire whose context ended while it waited.
func (p *Pool[T]) timedOut(err error, waitedNanos int64, waiting int) error {
	waited := time.Duration(waitedNanos)
	p.counters.canceled.Add(1)
	if p.obs != nil {
		p.obs.ObserveTimeout(waited)
	}
	e := p.acquireError(err, waited)
	if ae, ok := e.(*AcquireError); ok {
		ae.Waiting = waiting
		ae.Exhausted = p.exhaustion(err, waited, ae.InUse, ae.MaxConns)
	}
	return e
}

// handedError records an acquire that a release, a dial or Close failed
// while it waited, and says why: a dial's error, load shedding, ErrClosed.
func (p *Pool[T]) handedError(err error, waitedNanos int64) error {
	switch {
	case errors.Is(err, ErrExhausted):
		p.rejected()
	case errors.Is(err, ErrDial):
		p.counters.dialFailed.Add(1)
	}
	e := p.acquireError(err, time.Duration(waitedNanos))
	if ae, ok := e.(*AcquireError); ok {
		ae.Waiting++ // the queue let this caller go before it could count itself
	}
	return e
}

// rejected records an acquire refused by MaxWaiters or load shedding.
func (p *Pool[T]) rejected() {
	p.counters.rejected.Add(1)
	if p.obs != nil {
		p.obs.ObserveReject()
	}
}

// acquireError wraps why an acquire failed with what it waited for.
func (p *Pool[T]) acquireError(err error, waited time.Duration) error {
	if errors.Is(err, ErrClosed) && waited == 0 {
		return ErrClosed
	}
	e := &AcquireError{
		Pool:     p.cfg.Name,
		Err:      err,
		Waited:   waited,
		MaxConns: int(p.cap.limit.Load()),
		InUse:    p.inUse(),
		Waiting:  int(p.hot.waiters.Load()),
		Dialing:  int(p.cap.dialing.Load()),
	}
	if !errors.Is(err, ErrDial) {
		e.LastDial = p.lastDialError()
	}
	p.budgetHeldBack(e)
	return e
}

// inUse counts connections with at least one lease.
func (p *Pool[T]) inUse() int {
	_, inUse, _ := p.eng.count()
	return inUse
}
