package shoal

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"time"
)

// Pool is a pool of connections of type T. It is safe for concurrent use.
// Create one with New and close it with Close.
//
// Its fields are grouped by what they are: the line every acquire and
// release reads, the features the Config turned on, the two modes' engines,
// capacity and dials, waiting, what a few features need, and the pool's own
// life. Each part owns its state; ARCHITECTURE.md walks through them.
type Pool[T any] struct {
	hot  hotLine  // read on every acquire and release, written rarely
	feat features // what the Config turned on (features.go); never written after New
	ex   exclusiveEngine[T]
	eng  engine[T] // &ex or &mx: the mode (engine.go)
	mx   muxEngine[T]

	cfg  Config[T]
	obs  Observer  // cfg.Observer, nil for none
	cap  capacity  // limits and counts (capacity.go)
	dial dialState // recent dials: errors, backoff (dial.go)
	wq   waitQueue[T]
	link budgetLink // the Budget, if any (budget.go)
	shed *shedder   // nil without QueueTarget (shed.go)

	counters counters
	life     lifecycle
	epoch    time.Time // the pool clock's zero (now)
}

// hotLine is what the fast paths read on every acquire and release and
// rarely write, on a cache line of its own, away from the counters.
type hotLine struct {
	closed  atomic.Bool
	waiters atomic.Int32 // the wait queue's length, read without its lock
	// over: more connections are open than the limit allows (a shrink,
	// capacity.go), so exclusive connections coming back close instead.
	over atomic.Bool
	_    [cacheLine - 12]byte
}

// lifecycle is the pool's own life: the context its dials run under, the
// maintenance goroutine, and Close.
type lifecycle struct {
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
	// resets counts Reset calls. A dial notes it as its connect starts
	// (conn.gen): one that lands after a Reset was under way at it, and
	// the Reset's sweep could not reach it.
	resets atomic.Uint32
	// errWaitersFull is the error of an acquire refused by MaxWaiters,
	// made once: it names the bound, and the refusal allocates only the
	// AcquireError around it.
	errWaitersFull error
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
	// leftFor counts the connections let go, by Reason, as each leaves
	// (Stats.ClosedFor).
	leftFor [len(reasonNames)]atomic.Int64
}

// countLeft counts a connection let go for r (Stats.ClosedFor).
func (c *counters) countLeft(r Reason) {
	if r > 0 && int(r) < len(c.leftFor) {
		c.leftFor[r].Add(1)
	}
}

// New checks cfg and returns a pool. It dials nothing itself: MinIdle and
// MinConns connections are opened in the background (call Warm to wait for
// them).
func New[T any](cfg Config[T]) (*Pool[T], error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	cfg = cfg.normalized().named()
	if cfg.Close == nil {
		cfg.Close = ownClose[T]()
	}
	p := &Pool[T]{
		feat:  featuresOf(&cfg),
		cfg:   cfg,
		obs:   cfg.Observer,
		epoch: time.Now(),
	}
	p.life = lifecycle{
		kick:      make(chan struct{}, 1),
		quit:      make(chan struct{}),
		drained:   make(chan struct{}),
		maintDone: make(chan struct{}),
	}
	if cfg.MaxWaiters > 0 {
		p.life.errWaitersFull = fmt.Errorf("%w: MaxWaiters (%d) callers already waiting", ErrExhausted, cfg.MaxWaiters)
	}
	if cfg.QueueTarget > 0 {
		interval := cfg.QueueInterval
		if interval == 0 {
			interval = defaultQueueInterval
		}
		p.shed = newShedder(int64(cfg.QueueTarget), int64(interval))
	}
	p.ex.init(p)
	p.mx.p = p
	if p.feat.multiplexed {
		p.eng = &p.mx
	} else {
		p.eng = &p.ex
	}
	// Set before maintenance starts, so that no dial toward the floors
	// sees a limit above InitialMaxConns.
	limit := cfg.MaxConns
	if cfg.InitialMaxConns > 0 {
		limit = cfg.InitialMaxConns
	}
	p.cap.maxConns.Store(int32(limit))
	p.cap.share.Store(maxConnsLimit)
	p.cap.limit.Store(int32(limit))
	p.wq.count = &p.hot.waiters
	p.wq.tracer, _ = tracerOf(cfg.Observer)
	p.life.ctx, p.life.cancel = context.WithCancel(context.Background())

	if cfg.Budget != nil {
		if err := p.joinBudget(cfg.Budget); err != nil {
			p.life.cancel()
			return nil, err
		}
	}
	// Last, once the pool is whole and can no longer fail: from here a
	// scrape may call Stats at any moment, and Stats reads the partitions,
	// the slots, barging and the budget. An Observer that takes its name
	// from the pool (shoalprom's Pool("")) claims that name as it is
	// attached, so a pool that New refuses must never reach it.
	if a, ok := cfg.Observer.(StatsAttacher); ok {
		p.life.detachObs = a.Attach(p.Stats)
	}
	p.attachHolders(cfg.Observer)
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

// Close closes the pool. New acquires fail with ErrClosed and waiting ones
// wake with it; idle connections close now and leased ones when they are
// released. Close returns once every connection's Close has returned, no
// dial is left and the maintenance goroutine has ended, or, if ctx ends
// first, with a *CloseError that wraps ctx.Err() and says what was still
// held (the pool stays closed, and the rest close as their leases end).
// Calling Close again waits again.
func (p *Pool[T]) Close(ctx context.Context) error {
	p.life.closeOnce.Do(func() {
		// Under cap.mu, where every dial is decided: a dial either counts
		// in cap.open before Close looks, or sees closed.
		p.cap.mu.Lock()
		p.hot.closed.Store(true)
		p.cap.mu.Unlock()
		p.life.cancel()
		close(p.life.quit)
		p.ex.stopBarging()
		p.wq.failAll(ErrClosed, true)
		p.eng.closeIdle()
		p.checkDrained()
	})
	// A dial in flight holds a place in cap.open until its connection is
	// adopted (and then the connection holds it) or its failure is
	// recorded and logged, and a close until its Close has returned, so
	// drained also means that no dial, close or line of the log is left;
	// their goroutines have at most the closed queue and a look at closed
	// left before they return.
	for _, ch := range []chan struct{}{p.life.maintDone, p.life.drained} {
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
	e := &CloseError{Pool: p.cfg.Name, Err: err, Closing: int(p.cap.closing.Load()), Dialing: int(p.cap.dialing.Load())}
	now := p.now()
	var oldest *leaseRecord[T]
	var oldestAt int64
	for _, r := range p.eng.heldLeases() {
		e.Held++
		if at := r.acquiredAt.Load(); at != 0 && (oldest == nil || at < oldestAt) {
			oldest, oldestAt = r, at
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
	if p.hot.closed.Load() && p.cap.open.Load() == 0 && p.cap.dialing.Load() == 0 {
		p.life.drainOnce.Do(func() {
			if p.life.detachObs != nil {
				p.life.detachObs()
			}
			if p.link.leave != nil {
				p.link.leave()
			}
			close(p.life.drained)
		})
	}
}

// kickMaintenance wakes the maintenance goroutine without blocking.
func (p *Pool[T]) kickMaintenance() {
	select {
	case p.life.kick <- struct{}{}:
	default:
	}
}
