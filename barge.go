package shoal

import (
	"sync/atomic"
	"time"
)

// Barging (Config.HandoffAfter): a release with callers waiting may put its
// connection back on the idle stacks instead of handing it to the oldest
// waiter, so that whoever acquires next takes it on the fast path.
//
// Why: when callers outnumber connections, a strict hand-off costs two trips
// through the scheduler per release: the waiter is woken (runtime.ready,
// which may wake an idle P's thread to look for work) and the releaser, who
// typically comes straight back for another connection, parks. On a machine
// whose cores the database shares, that work competes with the database
// itself. Measured on the project's 2-core machine with PostgreSQL beside
// the client, 8 connections and 32 workers running SELECT 1 (bench/pgx,
// medians of paired rounds over seven runs): 0.68 to 0.82 of 8 dedicated
// connections' throughput with strict hand-off, 0.75 to 0.94 with a 1ms
// window, and 0.97 in one run with a 50ms window, which hardly ever hands
// off: nearly all of the gap between a pool and dedicated connections there
// is hand-offs. It is the bargain sync.Mutex strikes too: a newcomer may
// take the lock until a waiter has waited 1ms, then the lock goes to the
// waiters in turn. Those figures are from when every hand-off yielded the
// releaser's processor (runtime.Gosched), which after a round trip left
// released goroutines on the global run queue while connections idled;
// since hand-offs yield only after CPU-bound leases (yieldAfterHandoff),
// strict hand-off reads 0.76-0.83 there and a 1ms window 0.72-0.80, so
// barging is off by default everywhere.
//
// What bounds the unfairness: the bypass lasts only while the oldest waiter
// has waited less than HandoffAfter; from then on every release goes to the
// oldest waiter again, in order. What keeps a bypassed connection from
// sitting idle while someone waits (its releaser may never come back): a
// release that bypasses arms one pool-wide timer, and when it fires any
// idle connection goes to the oldest waiter, whatever its age. One timer
// for the pool, at most one firing per HandoffAfter, rather than a timer
// per waiter: with a timer per waiter every wait longer than the window
// costs a wake-up of its own, which is what barging exists to save
// (measured: worse than no barging at all with a 100 µs window).
type barger struct {
	after int64 // HandoffAfter in nanoseconds, > 0 (without barging a pool has no barger)
	armed atomic.Bool
	timer *time.Timer // stopped until armed; runs pool.handOffIdle
}

// newBarger returns the barging state for a pool with HandoffAfter after;
// fire is what the timer runs.
func newBarger(after time.Duration, fire func()) *barger {
	b := &barger{after: int64(after)}
	b.timer = time.AfterFunc(time.Hour, fire)
	b.timer.Stop()
	return b
}

// arm makes sure the timer will fire within HandoffAfter. Whoever calls it
// has just pushed a connection while someone waits: either the timer was
// not armed and now is, or it was armed and has not yet cleared the flag,
// so its look at the stacks comes after our push.
func (b *barger) arm() {
	if !b.armed.Load() && b.armed.CompareAndSwap(false, true) {
		b.timer.Reset(time.Duration(b.after))
	}
}

// stop stops the timer for good (the pool is closing).
func (b *barger) stop() { b.timer.Stop() }

// repoolReleased is repool for a lease that its holder released. With
// barging on and the oldest waiter younger than HandoffAfter, the connection
// goes on the idle stack for whoever asks next. Everything else that puts a
// connection back (a new one from a dial, a lease a leaving waiter passes
// on) calls repool: those were meant for a waiter already.
func (p *Pool[T]) repoolReleased(l *Lease[T]) {
	if p.barge == nil || p.waiters.Load() == 0 || p.handOffNow() {
		p.repool(l)
		return
	}
	p.pushIdle(l, true)
}

// handOffNow reports whether the oldest waiter has waited HandoffAfter, so
// that releases go to it. Only with barging on, when someone waits.
func (p *Pool[T]) handOffNow() bool {
	return p.now()-p.wq.headSince.Load() >= p.barge.after
}

// handOffIdle runs when the barging timer fires: a connection pushed while
// someone waited may still be idle, its releaser gone; give every idle one
// to the oldest waiters.
func (p *Pool[T]) handOffIdle() {
	p.barge.armed.Store(false)
	p.serveWaiters()
}
