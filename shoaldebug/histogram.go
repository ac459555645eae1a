package shoaldebug

import (
	"sync/atomic"
	"time"
)

// waitBounds are the histogram's upper bounds, a decade apart: acquire
// waits span from nothing to seconds, and a factor of ten per bucket
// shows which decade a pool lives in without a long table. The first
// bucket holds the acquires that did not wait at all, the last those
// above every bound.
var waitBounds = []time.Duration{
	0,
	10 * time.Microsecond,
	100 * time.Microsecond,
	time.Millisecond,
	10 * time.Millisecond,
	100 * time.Millisecond,
	time.Second,
}

// histogram counts acquire waits into waitBounds. Counting is one atomic
// add, since ObserveAcquire runs on every acquire.
type histogram struct {
	counts [8]atomic.Int64 // len(waitBounds)+1
}

// observe counts one wait.
func (h *histogram) observe(wait time.Duration) {
	i := 0
	for i < len(waitBounds) && wait > waitBounds[i] {
		i++
	}
	h.counts[i].Add(1)
}

// Bucket is one bar of the acquire-wait histogram.
type Bucket struct {
	// Label names the range: "none" for acquires that did not wait,
	// "≤ 1ms" for a bound, "> 1s" for the last one.
	Label string `json:"label"`
	// UpTo is the bucket's upper bound in nanoseconds; -1 for the last,
	// unbounded one.
	UpTo int64 `json:"up_to_ns"`
	// Count is how many acquires waited that long, over the pool's life.
	Count int64 `json:"count"`
}

// snapshot reads the counts.
func (h *histogram) snapshot() []Bucket {
	out := make([]Bucket, 0, len(h.counts))
	for i := range h.counts {
		b := Bucket{Count: h.counts[i].Load(), UpTo: -1}
		switch {
		case i == 0:
			b.Label, b.UpTo = "none", 0
		case i < len(waitBounds):
			b.Label, b.UpTo = "≤ "+waitBounds[i].String(), int64(waitBounds[i])
		default:
			b.Label = "> " + waitBounds[len(waitBounds)-1].String()
		}
		out = append(out, b)
	}
	return out
}
