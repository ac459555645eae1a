package shoal

import (
	"context"
	"sync/atomic"
	"time"
)

// Barging (Config.BargeWindow): a release with callers waiting may put its
// connection back on the idle stacks instead of handing it to the oldest
// waiter, so that whoever acquires next takes it on the fast path.
//
// Why: a strict hand-off costs two trips through the scheduler per release
// (the waiter is woken; the releaser, coming straight back, parks), and a
// processor that always has a handed-over goroutine to run polls the network
// late, so responses wait in their sockets. Barging lets the releaser take its
// connection back without a wake-up. It is the bargain sync.Mutex strikes
// with its starvation threshold; the figures behind it are in BENCHMARKS.md
// ("Barging").
//
// What bounds the unfairness: the bypass lasts only while the oldest waiter
// has waited less than the window (BargeWindow, stretched with a deep crowd:
// see mayBarge); from then on every release goes to the oldest waiter again,
// in order. What keeps a bypassed connection from sitting idle while someone
// waits: a release that bypasses arms one pool-wide timer (not one per
// waiter, whose wake-ups would cost what barging saves), and when it fires
// every idle connection goes to the oldest waiters, whatever their age.
//
// What bounds the cost where callers release and go on to other work instead
// of coming back: the timer hands such a connection over after the grace,
// and finding one that sat idle that long (a miss) suspends barging for
// suspendAfterMiss, so that such a workload pays that wait about once per
// suspension rather than on every release.
type barger struct {
	after int64 // BargeWindow in nanoseconds, > 0 (without barging a pool has no barger)
	// grace is how long a bypassed connection may sit idle while someone
	// waits before the timer hands it over: min(BargeWindow, idleGrace).
	grace time.Duration
	armed atomic.Bool
	timer *time.Timer // stopped until armed; runs exclusiveEngine.bargeTimerFired

	// Barging pays only when releasers come straight back for another
	// connection. When the timer finds a bypassed connection that sat idle
	// through the grace, its releaser did not, and a waiter paid for it:
	// releases then go to the waiters in order until suspendedUntil (pool
	// clock), set to suspend past that miss.
	suspend        time.Duration
	suspendedUntil atomic.Int64
	misses         atomic.Int64 // Stats.BargeMisses
}

// suspendAfterMiss is how long barging stays off after a bypassed connection
// sat idle while someone waited. It bounds what barging can cost a workload
// whose callers release and go on to other work: one wait of up to the
// grace (longer if the timer fires late) per suspension, against a
// hand-off per release.
const suspendAfterMiss = 100 * time.Millisecond

// idleGrace bounds how long a connection put back by a barging release
// may sit idle while someone waits. The window (BargeWindow) bounds how
// long a waiter can be passed over; it is not a reason to leave a
// connection unused. A releaser that comes straight back, as under load,
// takes its connection within a few microseconds, long before the timer;
// one that does not leaves it to the oldest waiter after idleGrace. The
// timer fires at most once per idleGrace.
const idleGrace = 200 * time.Microsecond

// newBarger returns the barging state for a pool with BargeWindow after;
// fire is what the timer runs.
func newBarger(after time.Duration, fire func()) *barger {
	b := &barger{after: int64(after), grace: min(after, idleGrace), suspend: suspendAfterMiss}
	b.timer = time.AfterFunc(time.Hour, fire)
	b.timer.Stop()
	return b
}

// arm makes sure the timer will fire within the grace. Whoever calls it
// has just pushed a connection while someone waits: either the timer was
// not armed and now is, or it was armed and has not yet cleared the flag,
// so its look at the stacks comes after our push.
func (b *barger) arm() {
	if !b.armed.Load() && b.armed.CompareAndSwap(false, true) {
		b.timer.Reset(b.grace)
	}
}

// stop stops the timer as the pool closes. A release already past its
// look at closed may arm it once more; it then fires into an empty, closed
// wait queue and hands nothing off (handOffIdle serves only waiters).
func (b *barger) stop() { b.timer.Stop() }

// mayBarge reports whether, at the pool clock's now, a release may skip the
// oldest waiter: it has waited less than the window (BargeWindow, stretched
// when the crowd is deep), and barging is not suspended. Only with barging
// on, when someone waits.
//
// The window is BargeWindow × waiters / (crowdPerConn × open connections),
// never less than BargeWindow nor more than maxStretch times it. A fixed
// window forces a rotation: with w callers waiting, w hand-offs per window,
// each a park and a wake-up. Stretching it with the crowd keeps that at about
// crowdPerConn hand-offs per connection per window, and the oldest waiter's
// bound grows with the queue, as a first-come, first-served wait does anyway
// (figures in BENCHMARKS.md, "Barging").
func (e *exclusiveEngine[T]) mayBarge(now int64) bool {
	p, b := e.p, e.barge
	if now < b.suspendedUntil.Load() {
		return false
	}
	waited := now - p.wq.headSince.Load()
	if waited < b.after {
		return true
	}
	if waited >= maxStretch*b.after {
		return false
	}
	// waited < after × waiters / (crowdPerConn × open), in floating
	// point: the products can pass int64 for long windows.
	crowd := float64(p.hot.waiters.Load())
	room := float64(crowdPerConn) * float64(p.cap.open.Load())
	return float64(waited)*room < float64(b.after)*crowd
}

// shortOfTime reports whether a caller should wait its turn rather than
// barge: barging is on, callers wait, and ctx ends sooner than the oldest
// of them has waited. Such a caller would likely not be served in time in
// turn, and one that barges is the likeliest to give its connection up
// mid-statement, which costs the connection for the cancel's round trip
// (a statement a database is asked to cancel), where giving up in the
// queue costs nothing. In turn it waits behind the callers already
// waiting, as it would with barging off (though later callers with time to
// spare may still barge past it, within the window).
func (e *exclusiveEngine[T]) shortOfTime(ctx context.Context) bool {
	p := e.p
	if p.hot.waiters.Load() == 0 {
		return false
	}
	d, ok := ctx.Deadline()
	if !ok {
		return false
	}
	return int64(time.Until(d)) < p.now()-p.wq.headSince.Load()
}

// crowdPerConn is how many waiters per open connection a barging pool's
// window serves within BargeWindow; past it the window stretches in
// proportion (mayBarge).
const crowdPerConn = 8

// maxStretch caps the stretched window at this many times BargeWindow:
// however deep the queue, the oldest waiter is passed over for at most
// that long.
const maxStretch = 4

// bargeTimerFired runs when the barging timer fires: a connection pushed while
// someone waited may still be idle, its releaser gone; give every idle one
// to the oldest waiters. One that sat idle through half the grace or more
// was a miss, and suspends barging.
func (e *exclusiveEngine[T]) bargeTimerFired() {
	b := e.barge
	b.armed.Store(false)
	e.handOffIdle(func(c *conn[T]) {
		if now := e.p.now(); c.idleFor(now) >= int64(b.grace)/2 {
			b.suspendedUntil.Store(now + int64(b.suspend))
			b.misses.Add(1)
		}
	})
}
