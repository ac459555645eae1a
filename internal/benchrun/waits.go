package benchrun

import (
	"math"
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal"
)

// WaitObserver is a shoal.Observer that keeps a histogram of acquire waits,
// as the pool itself reports them, for the measured period only. Give it to
// a case's pool as Config.Observer and to the runner as Instance.Waits: the
// runner resets it when the measured period starts and reads its
// percentiles when it ends, in place of the waits the operation timed
// itself.
//
// The histogram has 8 buckets per power of two of nanoseconds (each about
// 9% wide), updated with one atomic add: cheap enough for the hot path, and
// it allocates nothing.
type WaitObserver struct {
	shoal.BaseObserver
	on      atomic.Bool
	buckets [64 * waitSubBuckets]atomic.Int64
	sum     atomic.Int64
	max     atomic.Int64
}

const waitSubBuckets = 8

// ObserveAcquire records one acquire's wait while the measured period runs.
func (o *WaitObserver) ObserveAcquire(wait time.Duration) {
	if !o.on.Load() {
		return
	}
	ns := max(int64(wait), 0)
	o.buckets[waitBucket(ns)].Add(1)
	o.sum.Add(ns)
	for {
		cur := o.max.Load()
		if ns <= cur || o.max.CompareAndSwap(cur, ns) {
			return
		}
	}
}

// start clears the histogram and begins recording.
func (o *WaitObserver) start() {
	for i := range o.buckets {
		o.buckets[i].Store(0)
	}
	o.sum.Store(0)
	o.max.Store(0)
	o.on.Store(true)
}

// stop ends recording and summarises what was recorded, or nil if nothing.
func (o *WaitObserver) stop() *Wait {
	o.on.Store(false)
	var total int64
	counts := make([]int64, len(o.buckets))
	for i := range o.buckets {
		counts[i] = o.buckets[i].Load()
		total += counts[i]
	}
	if total == 0 {
		return nil
	}
	at := func(p float64) time.Duration {
		rank := int64(math.Ceil(p / 100 * float64(total)))
		var seen int64
		for i, c := range counts {
			if seen += c; seen >= rank {
				return time.Duration(min(waitBucketUpper(i), o.max.Load()))
			}
		}
		return time.Duration(o.max.Load())
	}
	return &Wait{
		Mean: time.Duration(o.sum.Load() / total),
		P50:  at(50),
		P99:  at(99),
		P999: at(99.9),
		Max:  time.Duration(o.max.Load()),
	}
}

// waitBucket maps nanoseconds to a bucket: values below 8 get a bucket
// each, above that 8 buckets per power of two.
func waitBucket(ns int64) int {
	if ns < waitSubBuckets {
		return int(ns)
	}
	exp := bits.Len64(uint64(ns)) - 1 // ns in [2^exp, 2^(exp+1))
	sub := int(ns>>(exp-3)) & (waitSubBuckets - 1)
	return (exp-2)*waitSubBuckets + sub
}

// waitBucketUpper returns the largest value that falls in bucket i.
func waitBucketUpper(i int) int64 {
	if i < waitSubBuckets {
		return int64(i)
	}
	exp := i/waitSubBuckets + 2
	sub := int64(i % waitSubBuckets)
	lower := int64(1)<<exp + sub<<(exp-3)
	return lower + int64(1)<<(exp-3) - 1
}
