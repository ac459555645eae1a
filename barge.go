package shoal

import (
	"sync/atomic"
	"time"
)

// Barging (Config.BargeWindow): a release with callers waiting may put its
// connection back on the idle stacks instead of handing it to the oldest
// waiter, so that whoever acquires next takes it on the fast path.
//
// Why: when callers outnumber connections, a strict hand-off costs two trips
// through the scheduler per release: the waiter is woken (runtime.ready puts
// it in the releaser's P's next slot, and may wake an idle P's thread to look
// for work) and the releaser, who typically comes straight back for another
// connection, parks. Worse, a P that always has a handed-over goroutine to
// run next never runs out of work, and a P looks at the network poller only
// when it runs out of work (or when sysmon finds it unpolled for 10ms). Traced
// on the project's 2-core machine with PostgreSQL beside the client (perf
// sched and syscall tracepoints, bench/pgx at 32 workers on 8 connections):
// stretches of 0.5 to 5ms in which each P cycled one connection between
// handed-over goroutines while the other six connections' responses sat
// unread in their sockets and a core idled. Dedicated connections showed
// such stretches too under the tracer, but without it the machine sat 2-3%
// idle with them against 9-13% under strict hand-off.
//
// Barging lets the releaser, coming back, take its connection on the fast
// path: no wake-up, and a goroutine that parks on its socket leaves its P
// with nothing to run, so the P polls the network. Measured the same way
// (paired medians of 6 rounds, fraction of 8 dedicated connections, SELECT 1
// / small row): strict 0.73 / 0.81 at 32 workers and 0.84 / 0.80 at 128; a
// 1ms window 0.81 / 0.92 and 0.89 / 0.82; 4ms 0.88 / 0.97 and 0.87 / 0.90.
// A window shorter than the typical wait degenerates into strict hand-off:
// at 128 workers on 8 connections the median wait is about 2ms. The price is
// the tail: p99 7.0ms against 4.3ms at 32 workers, 10.3ms against 6.1ms at
// 128, for a median of 29µs against 465µs and 38µs against 2.0ms. It is the
// bargain sync.Mutex strikes too, with 1ms. shoalpgx turns it on (4ms); the
// core leaves it off, since for leases held for CPU work alone strict
// hand-off with a yield (yieldAfterHandoff) is what measured best.
//
// What bounds the unfairness: the bypass lasts only while the oldest waiter
// has waited less than the window; from then on every release goes to the
// oldest waiter again, in order. The window is BargeWindow while at most
// crowdPerConn callers wait per open connection, and stretches in
// proportion past that, up to maxStretch times BargeWindow (see
// handOffAt). What keeps a bypassed connection from sitting idle while
// someone waits (its releaser may never come back): a release that
// bypasses arms one pool-wide timer, and when it fires any idle connection
// goes to the oldest waiter, whatever its age. One timer
// for the pool, at most one firing per idleGrace, rather than a timer
// per waiter: with a timer per waiter every wait longer than the window
// costs a wake-up of its own, which is what barging exists to save
// (measured: worse than no barging at all with a 100 µs window).
//
// What bounds the cost where barging does not pay, because callers release
// and go on to other work instead of coming back: the timer hands such a
// connection over after the grace (or later, when the process is idle and
// the timer fires late: Go's poller sleeps in whole milliseconds), and
// when it finds one that sat idle that long it suspends barging for
// suspendAfterMiss, so that such a workload pays that wait about once per
// 100ms rather than on every release. In bench/pgx, whose workers always
// come back, misses happen only as a round ends and its workers leave.
type barger struct {
	after int64 // BargeWindow in nanoseconds, > 0 (without barging a pool has no barger)
	// grace is how long a bypassed connection may sit idle while someone
	// waits before the timer hands it over: min(BargeWindow, idleGrace).
	grace time.Duration
	armed atomic.Bool
	timer *time.Timer // stopped until armed; runs pool.handOffIdle

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
// grace (a millisecond, if the timer fires late) per 100ms, against a
// hand-off per release.
const suspendAfterMiss = 100 * time.Millisecond

// idleGrace bounds how long a connection put back by a barging release
// may sit idle while someone waits. The window (BargeWindow) bounds how
// long a waiter can be passed over; it is not a reason to leave a
// connection unused. A releaser that comes straight back, as under load,
// takes its connection within a few microseconds, long before the timer;
// one that does not leaves it to the oldest waiter after idleGrace. The
// timer fires at most once per idleGrace, so at most 5,000 times a second.
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

// stop stops the timer for good (the pool is closing).
func (b *barger) stop() { b.timer.Stop() }

// repoolReleased is repool for a lease that its holder released. With
// barging on and the oldest waiter younger than the window, the connection
// goes on the idle stack for whoever asks next, stamped with the time, so
// that the timer can tell how long it sat there. Everything else that puts
// a connection back (a new one from a dial, a lease a leaving waiter passes
// on) calls repool: those were meant for a waiter already.
func (p *Pool[T]) repoolReleased(l *leaseState[T]) {
	if p.barge == nil || p.waiters.Load() == 0 {
		p.repool(l)
		return
	}
	now := p.now()
	if p.handOffAt(now) {
		p.repool(l)
		return
	}
	if p.over.Load() {
		p.repool(l) // which closes it if the pool is still above its limit
		return
	}
	l.c.idleSince.Store(now)
	p.pushIdle(l, true)
}

// handOffNow reports whether releases go to the oldest waiter now: it has
// waited the window (BargeWindow, stretched when the crowd is deep; see
// handOffAt), or barging is suspended. Only with barging on, when
// someone waits.
func (p *Pool[T]) handOffNow() bool { return p.handOffAt(p.now()) }

// handOffAt is handOffNow at the pool clock's now.
//
// The window is BargeWindow × waiters / (crowdPerConn × open connections),
// never less than BargeWindow nor more than maxStretch times it. Serving
// every waiter within a fixed window forces a rotation: with w callers
// waiting, w hand-offs per window, each a park and a wake-up, and the
// processors that run handed-over goroutines poll the network less (see
// the top of this file). Stretching the window with the crowd keeps that
// rotation at about crowdPerConn hand-offs per connection per BargeWindow,
// and the oldest waiter's bound then grows with the queue, as a wait in a
// first-come, first-served queue does anyway. Measured on the project's
// 2-core machine (bench/pgx, 8 connections, 4ms, paired medians against
// dedicated connections, SELECT 1 and small row, two alternations): at 128
// workers 0.91-0.96 stretched against 0.89-0.90 fixed, p99 11-12ms against
// 8-9ms, the machine 4-5% idle against 7-8%; at 32 workers, where the
// crowd is 3 per connection, nothing changes. A crowd of 4 per connection
// instead of 8 read 0.94-1.01 at 128 workers for a p99 of 18-20ms.
func (p *Pool[T]) handOffAt(now int64) bool {
	b := p.barge
	if waited := now - p.wq.headSince.Load(); waited >= b.after {
		if waited >= maxStretch*b.after {
			return true
		}
		// waited >= after × waiters / (crowdPerConn × open), in floating
		// point: the products can pass int64 for long windows.
		crowd := float64(p.waiters.Load())
		room := float64(crowdPerConn) * float64(p.open.Load())
		if float64(waited)*room >= float64(b.after)*crowd {
			return true
		}
	}
	return now < b.suspendedUntil.Load()
}

// crowdPerConn is how many waiters per open connection a barging pool's
// window serves within BargeWindow; past it the window stretches in
// proportion (handOffAt).
const crowdPerConn = 8

// maxStretch caps the stretched window at this many times BargeWindow:
// however deep the queue, the oldest waiter is passed over for at most
// that long.
const maxStretch = 4

// handOffIdle runs when the barging timer fires: a connection pushed while
// someone waited may still be idle, its releaser gone; give every idle one
// to the oldest waiters. One that sat idle through half the grace or more
// was a miss, and suspends barging.
func (p *Pool[T]) handOffIdle() {
	b := p.barge
	b.armed.Store(false)
	p.serveWaitersWith(func(c *conn[T]) {
		if now := p.now(); c.idleFor(now) >= int64(b.grace)/2 {
			b.suspendedUntil.Store(now + int64(b.suspend))
			b.misses.Add(1)
		}
	})
}
