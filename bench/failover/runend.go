package main

import (
	"math"
	"sync/atomic"
	"time"
)

// runEnd is when a run's workers and readers stop, as a time since the run
// began. It can be left open and set later: a rejoin run lasts until a
// while after the rejoin returned, which nothing knows when the run begins.
type runEnd struct {
	begin time.Time
	at    atomic.Int64 // a time.Duration since begin
}

// newRunEnd returns the end of a run that began at begin: at length, or
// open (until set) when length is 0.
func newRunEnd(begin time.Time, length time.Duration) *runEnd {
	e := &runEnd{begin: begin}
	if length == 0 {
		length = math.MaxInt64
	}
	e.at.Store(int64(length))
	return e
}

// set ends the run at length since it began.
func (e *runEnd) set(length time.Duration) { e.at.Store(int64(length)) }

// length is the run's length as set, math.MaxInt64 while it is open.
func (e *runEnd) length() time.Duration { return time.Duration(e.at.Load()) }

// left is the time until the run ends, 0 or less once it has.
func (e *runEnd) left() time.Duration { return e.length() - time.Since(e.begin) }

// running reports whether the run has not ended yet.
func (e *runEnd) running() bool { return e.left() > 0 }

// rejoinLength is how long a rejoin run lasts: duration, or until after
// past the rejoin's return when that is later, so that the phase after the
// rejoin always has after in it.
func rejoinLength(duration, after, rejoinedAt time.Duration) time.Duration {
	return max(duration, rejoinedAt+after)
}
