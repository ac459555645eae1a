package shoal

import (
	"fmt"
	"math"
	"sync/atomic"
	"time"
)

// shedder implements load shedding in the style of Elixir's DBConnection
// (queue_target, queue_interval). The idea: a queue is healthy while at
// least some callers get through it quickly. If during a whole interval not
// one acquire waited less than the target, the pool is overloaded, and
// letting the queue grow only turns every request into a slow one; so,
// until an interval passes in which some acquire is quick again, callers
// that have waited twice the target are told ErrExhausted at once, and the
// ones behind them get through.
type shedder struct {
	target   int64 // nanoseconds
	interval int64 // nanoseconds

	// minWait is the shortest wait of an acquire that completed in the
	// current interval; math.MaxInt64 when none did. Acquires lower it
	// with a compare-and-swap, almost always just a load.
	minWait  atomic.Int64
	shedding atomic.Bool

	windowEnd int64 // pool clock; touched by the maintenance goroutine only
}

func newShedder(target, interval int64) *shedder {
	s := &shedder{target: target, interval: interval}
	s.minWait.Store(math.MaxInt64)
	return s
}

// observe records one acquire's wait.
func (s *shedder) observe(wait int64) {
	for {
		cur := s.minWait.Load()
		if wait >= cur || s.minWait.CompareAndSwap(cur, wait) {
			return
		}
	}
}

// shedTick closes an interval when it is over, switching shedding on or
// off, and while shedding drops the waiters that waited 2*QueueTarget.
func (p *Pool[T]) shedTick(now int64) {
	s := p.shed
	if now >= s.windowEnd {
		minWait := s.minWait.Swap(math.MaxInt64)
		oldest, waiting := p.wq.oldestSince()
		var overloaded bool
		if minWait != math.MaxInt64 {
			overloaded = minWait > s.target
		} else {
			// Nobody got through this interval: overloaded if somebody
			// has been trying for longer than the target.
			overloaded = waiting && now-oldest > s.target
		}
		if s.shedding.Swap(overloaded) != overloaded {
			if minWait == math.MaxInt64 {
				// No acquire got through: the oldest waiter's wait so far
				// is the least any wait came to, and with nobody waiting
				// there is no wait to report at all.
				minWait = -1
				if waiting {
					minWait = now - oldest
				}
			}
			p.logShedding(overloaded, time.Duration(minWait))
		}
		s.windowEnd = now + s.interval
	}
	if s.shedding.Load() {
		err := fmt.Errorf("%w: load shedding: no acquire in the last %s waited less than QueueTarget %s",
			ErrExhausted, time.Duration(s.interval), time.Duration(s.target))
		p.wq.failOlderThan(now-2*s.target, err)
	}
}
