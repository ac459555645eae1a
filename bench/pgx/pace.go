package main

import (
	"sync/atomic"
	"time"
)

// paceWindow is the slice of a round over which its slowest stretch is
// measured: short enough that a pause of the whole pool shows as a slice
// with almost nothing done, long enough to hold many calls when it runs.
const paceWindow = 100 * time.Millisecond

// callCounts holds, per worker, the calls it has completed. Each count has
// a cache line of its own, so that counting costs a worker neither a lock
// nor a line shared with another worker.
type callCounts []paddedCount

type paddedCount struct {
	n atomic.Int64
	_ [56]byte
}

// total is the calls all workers have completed so far.
func (c callCounts) total() int64 {
	var sum int64
	for i := range c {
		sum += c[i].n.Load()
	}
	return sum
}

// A pace follows a round's completed calls, sampled at every window, and
// keeps the lowest rate of any window: a round whose q/s fell because work
// stopped has a window near zero, one that fell because a call stuck past
// the round's end does not.
type pace struct {
	last    time.Time
	lastN   int64
	slowest float64 // calls per second; valid when windows > 0
	windows int
}

// startPace begins following at start, with no calls done.
func startPace(start time.Time) pace {
	return pace{last: start}
}

// sample records that n calls had completed by now. A slice shorter than
// half a window (a sample taken right after another) is not counted as a
// window, so that a few microseconds with no call completed do not read
// as a stall; a longer one that a late tick stretched is counted at its
// own length.
func (p *pace) sample(now time.Time, n int64) {
	d := now.Sub(p.last)
	if d < paceWindow/2 {
		return
	}
	rate := float64(n-p.lastN) / d.Seconds()
	if p.windows == 0 || rate < p.slowest {
		p.slowest = rate
	}
	p.windows++
	p.last, p.lastN = now, n
}

// slowestRate is the lowest rate of any window, calls per second, and
// false when the round was too short to hold one.
func (p *pace) slowestRate() (float64, bool) {
	return p.slowest, p.windows > 0
}
