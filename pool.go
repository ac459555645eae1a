package shoal

import (
	"context"
	"fmt"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// Pool is a pool of connections of type T. It is safe for concurrent use.
// Create one with New and close it with Close.
type Pool[T any] struct {
	// Read on every acquire and release; written rarely. Kept together on
	// their own cache line, away from the counters below.
	closed  atomic.Bool
	waiters atomic.Int32 // length of wq, read without its lock
	// over: more connections are open than the limit allows (a shrink,
	// resize.go), so connections coming back close instead.
	over atomic.Bool
	_    [cacheLine - 12]byte

	// Read on every acquire and release, never written after New: kept
	// together so the fast paths touch one line of the Pool besides the
	// one above.
	// plain: exclusive mode with nothing to do on the way in or out (no
	// check, hook, clock, lifetime, observer, leak tracking or shedding),
	// so Acquire and Release take their shortest paths.
	plain bool
	// quickTake: exclusive mode with no check on the way out, so a popped
	// connection is the caller's as it is.
	quickTake bool
	ex        exclusiveEngine[T] // exclusive mode: idle stacks and slots
	eng       engine[T]          // &ex or &mx: the mode (engine.go)

	cfg        Config[T]
	maxStreams int // 1 in exclusive mode
	// countsExcess: connections above a lowered limit close as they come
	// back, counted in dial.shrinking (resize.go), as exclusive mode does;
	// multiplexed mode retires them in its engine's shrink instead.
	countsExcess bool
	maxDialing   int32
	healthAfter  int64 // nanoseconds
	checkOnTake  bool  // some check runs when a connection is taken
	clockOnIdle  bool  // releases record idleSince
	tracking     bool  // onAcquired runs (shedding, observer or leaks)
	trackHeld    bool  // leases record acquiredAt (observer or leaks)
	ctxChecks    bool  // a check uses the caller's context (HealthCheck, BeforeAcquire)
	obs          Observer
	waitTracer   WaitTracer // obs, if it traces waits
	epoch        time.Time

	open    atomic.Int32 // connections open or being dialled; never above limit but after a shrink
	dialing atomic.Int32 // dials in flight
	closing atomic.Int32 // closes running on their own goroutines (disconnect)

	// The limits on open connections (resize.go), written under dial.mu.
	maxConns atomic.Int32 // Config.MaxConns, or what SetMaxConns set last
	share    atomic.Int32 // the Budget's share; maxConnsLimit without a Budget
	limit    atomic.Int32 // min(maxConns, share): what dials are held to
	budget   Budget       // Config.Budget
	leave    func()       // from Budget.Join; called once drained

	wq   waitQueue[T]
	mx   muxEngine[T] // multiplexed mode
	dial dialState
	shed *shedder // nil when QueueTarget is 0
	// errWaitersFull is the error of an acquire refused by MaxWaiters,
	// made once: it names the bound, and the refusal allocates only the
	// AcquireError around it.
	errWaitersFull error
	barge          *barger // nil when BargeWindow is 0

	counters counters

	ctx       context.Context // ends when the pool closes; dials run under it
	cancel    context.CancelFunc
	kick      chan struct{} // wakes the maintenance goroutine
	passes    atomic.Int64  // maintenance passes run, for tests
	quit      chan struct{} // closed by Close: maintenance stops
	maintDone chan struct{} // closed when the maintenance goroutine returns
	closeOnce sync.Once
	drained   chan struct{} // closed when the pool is closed and every conn is
	drainOnce sync.Once
	detachObs func() // from a StatsAttacher observer; called once drained
}

// counters are the Stats counters that are not kept per partition. They are
// touched only on slower paths (waits, dials, closes).
type counters struct {
	// Acquires = hand-outs of live leases + closedHandouts - unused.
	closedHandouts atomic.Int64 // hand-outs of the leases of closed connections
	unused         atomic.Int64 // hand-outs that did not become acquires (a check failed, the waiter left)
	acquiresSeen   atomic.Int64 // the highest Acquires a Stats call has reported

	canceled   atomic.Int64
	rejected   atomic.Int64
	dialFailed atomic.Int64 // acquires failed with a dial's error
	dials      atomic.Int64
	dialErrors atomic.Int64
	closed     atomic.Int64
	leaked     atomic.Int64
}

// New checks cfg and returns a pool. It dials nothing itself: MinIdle and
// MinConns connections are opened in the background (call Warm to wait for
// them).
func New[T any](cfg Config[T]) (*Pool[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Close == nil {
		cfg.Close = ownClose[T]()
	}
	p := &Pool[T]{
		cfg:        cfg,
		maxStreams: max(cfg.MaxStreams, 1),
		epoch:      time.Now(),
		kick:       make(chan struct{}, 1),
		quit:       make(chan struct{}),
		drained:    make(chan struct{}),
		maintDone:  make(chan struct{}),
	}
	multiplexed := p.maxStreams > 1
	if cfg.MaxWaiters > 0 {
		p.errWaitersFull = fmt.Errorf("%w: MaxWaiters (%d) callers already waiting", ErrExhausted, cfg.MaxWaiters)
	}
	p.maxDialing = int32(cfg.MaxDialing)
	if p.maxDialing == 0 {
		p.maxDialing = int32(min(cfg.MaxConns, defaultMaxDialing))
	}
	if cfg.HealthCheck != nil {
		p.healthAfter = int64(cfg.HealthCheckAfter)
		if p.healthAfter == 0 {
			p.healthAfter = int64(defaultHealthCheckAfter)
		}
	}
	p.clockOnIdle = cfg.MaxIdleTime > 0 || cfg.HealthCheck != nil
	p.checkOnTake = cfg.MaxLifetime > 0 || cfg.HealthCheck != nil || cfg.Hooks.BeforeAcquire != nil
	p.ctxChecks = cfg.HealthCheck != nil || cfg.Hooks.BeforeAcquire != nil
	p.obs = cfg.Observer
	p.waitTracer, _ = cfg.Observer.(WaitTracer)
	p.trackHeld = cfg.Observer != nil || cfg.LeakThreshold > 0
	if cfg.QueueTarget > 0 {
		interval := cfg.QueueInterval
		if interval == 0 {
			interval = defaultQueueInterval
		}
		p.shed = newShedder(int64(cfg.QueueTarget), int64(interval))
	}
	if cfg.BargeWindow > 0 {
		p.barge = newBarger(cfg.BargeWindow, p.bargeTimerFired)
	}
	p.tracking = p.trackHeld || p.shed != nil
	p.quickTake = !multiplexed && !p.checkOnTake
	p.plain = p.quickTake && !p.tracking && !p.clockOnIdle &&
		cfg.MaxLifetime == 0 && cfg.Hooks.AfterRelease == nil
	p.countsExcess = !multiplexed

	nparts := cfg.Partitions
	if nparts == 0 {
		nparts = min(runtime.GOMAXPROCS(0), cfg.MaxConns, maxDefaultPartitions)
	}
	if multiplexed {
		nparts = 1
		p.eng = &p.mx
	} else {
		p.eng = &p.ex
	}
	p.ex.parts = make([]partition[T], nparts)
	p.maxConns.Store(int32(cfg.MaxConns))
	p.share.Store(maxConnsLimit)
	p.limit.Store(int32(cfg.MaxConns))
	p.wq.count = &p.waiters
	p.wq.passOn = p.passOn
	p.ex.p, p.mx.p = p, p
	p.ctx, p.cancel = context.WithCancel(context.Background())

	// Last, once the pool is whole: from here a scrape may call Stats at
	// any moment, and Stats reads the partitions, the slots and barging.
	if a, ok := cfg.Observer.(StatsAttacher); ok {
		p.detachObs = a.Attach(p.Stats)
	}
	if cfg.Budget != nil {
		if err := p.joinBudget(cfg.Budget); err != nil {
			p.cancel()
			if p.detachObs != nil {
				p.detachObs()
			}
			return nil, err
		}
	}
	go p.maintain()
	if p.keepsFloor() {
		p.kickMaintenance()
	}
	return p, nil
}

// now is the pool clock: nanoseconds since New, from the monotonic clock,
// plus one. time.Since on a time with a monotonic reading skips the wall
// clock. The clock never reads 0, which marks a time never recorded
// (idleSince, handedAt): under testing/synctest time stands still, and a
// connection released at New's instant must still count as idle.
func (p *Pool[T]) now() int64 { return int64(time.Since(p.epoch)) + 1 }

// Stats returns a snapshot of the pool's state and counters.
func (p *Pool[T]) Stats() Stats {
	s := Stats{
		MaxConns:         int(p.maxConns.Load()),
		Share:            int(min(p.share.Load(), p.maxConns.Load())),
		MinIdle:          p.cfg.MinIdle,
		MinConns:         p.cfg.MinConns,
		Waiting:          int(p.waiters.Load()),
		Dialing:          int(p.dialing.Load()),
		Closing:          int(p.closing.Load()),
		CanceledAcquires: p.counters.canceled.Load(),
		RejectedAcquires: p.counters.rejected.Load(),
		FailedAcquires:   p.counters.dialFailed.Load(),
		Dials:            p.counters.dials.Load(),
		DialErrors:       p.counters.dialErrors.Load(),
		Closed:           p.counters.closed.Load(),
		Leaked:           p.counters.leaked.Load(),
	}
	if p.barge != nil {
		s.BargeMisses = p.barge.misses.Load()
	}
	// Acquires is summed from counters that move apart while connections
	// close (see monotonicAcquires); closedHandouts is read before the
	// walk and unused after it, which keeps a close from being counted
	// twice.
	s.Acquires = p.counters.closedHandouts.Load()
	for i := range p.ex.parts {
		s.WaitedAcquires += p.ex.parts[i].waited.Load()
		s.WaitTime += time.Duration(p.ex.parts[i].waitNanos.Load())
	}
	if p.budget != nil {
		s.Share = int(p.share.Load())
		s.BudgetMembers = 1 // this pool, whatever the budget knows yet
		if m, ok := p.budget.(interface{ Members() int }); ok {
			s.BudgetMembers = max(m.Members(), 1)
		}
	}
	p.eng.stats(&s)
	s.Demand = p.demandFrom(s.Leases, s.Waiting)
	s.Acquires = p.monotonicAcquires(s.Acquires - p.counters.unused.Load())
	return s
}

// monotonicAcquires keeps Stats.Acquires from falling. The sum Stats makes
// can fall short of the truth for a moment: a closing connection leaves the
// slot table before its hand-outs reach closedHandouts, with its hooks and
// Close in between. A counter must never go backwards (shoalprom exports
// it as one), so Stats reports the highest sum any call has seen. The sum
// can also run ahead by a hand-out for an instant (a waiter that passes on
// a lease it was handed counts it unused just after the hand-out); the
// count reported then stays that far ahead until the next acquire.
func (p *Pool[T]) monotonicAcquires(sum int64) int64 {
	for {
		seen := p.counters.acquiresSeen.Load()
		if sum <= seen {
			return seen
		}
		if p.counters.acquiresSeen.CompareAndSwap(seen, sum) {
			return sum
		}
	}
}

// Close closes the pool. New acquires fail with ErrClosed and waiting ones
// wake with it; idle connections close now and leased ones when they are
// released. Close returns once every connection's Close has returned, no
// dial is left and the maintenance goroutine has ended, or, if ctx ends
// first, with a *CloseError that wraps ctx.Err() and says what was still
// held (the pool stays closed, and the rest close as their leases end).
// Calling Close again waits again.
func (p *Pool[T]) Close(ctx context.Context) error {
	p.closeOnce.Do(func() {
		// Under dial.mu, where every dial is decided: a dial either
		// counts in p.open before Close looks, or sees closed.
		p.dial.mu.Lock()
		p.closed.Store(true)
		p.dial.mu.Unlock()
		p.cancel()
		close(p.quit)
		if p.barge != nil {
			p.barge.stop()
		}
		p.wq.failAll(ErrClosed, true)
		p.eng.closeIdle()
		p.checkDrained()
	})
	// A dial in flight holds a place in p.open until its connection is
	// adopted (and then the connection holds it) or the dial has failed,
	// and a close until its Close has returned, so drained also means that
	// no dial or close is left to do; their goroutines have at most a look
	// at closed left before they return.
	for _, ch := range []chan struct{}{p.maintDone, p.drained} {
		select {
		case <-ch:
		case <-ctx.Done():
			return p.closeError(ctx.Err())
		}
	}
	return nil
}

// closeError says what a Close whose context ended was still waiting for.
func (p *Pool[T]) closeError(err error) error {
	e := &CloseError{Err: err, Closing: int(p.closing.Load()), Dialing: int(p.dialing.Load())}
	now := p.now()
	var oldest *leaseState[T]
	var oldestAt int64
	for _, l := range p.eng.heldLeases() {
		e.Held++
		if at := l.acquiredAt.Load(); at != 0 && (oldest == nil || at < oldestAt) {
			oldest, oldestAt = l, at
		}
	}
	if oldest != nil {
		e.OldestHeld = time.Duration(now - oldestAt)
		e.HeldBy = oldest.acquiredBy()
	}
	return e
}

// checkDrained signals Close once the pool is closed and nothing is open.
func (p *Pool[T]) checkDrained() {
	if p.closed.Load() && p.open.Load() == 0 && p.dialing.Load() == 0 {
		p.drainOnce.Do(func() {
			if p.detachObs != nil {
				p.detachObs()
			}
			if p.leave != nil {
				p.leave()
			}
			close(p.drained)
		})
	}
}

// kickMaintenance wakes the maintenance goroutine without blocking.
func (p *Pool[T]) kickMaintenance() {
	select {
	case p.kick <- struct{}{}:
	default:
	}
}
