package core

import (
	"math/bits"
	"time"
)

// waitHistogram counts acquire waits in log-linear buckets: values below
// 2*histSub nanoseconds exactly, larger ones in histSub buckets per power of
// two, so every bucket is within 1/histSub (about 3%) of its values.
// Recording is an index computation and an increment: no allocation and no
// lock, so each goroutine owns one and they are merged after the run.
type waitHistogram struct {
	counts [histBuckets]uint64
}

const (
	histSubBits = 5
	histSub     = 1 << histSubBits
	// histMaxShift covers waits up to 2^(histMaxShift+histSubBits+1) ns,
	// about 36 minutes; longer ones land in the last bucket.
	histMaxShift = 35
	histBuckets  = (histMaxShift + 2) * histSub
)

// bucketOf maps a wait in nanoseconds to its bucket. For v >= 2*histSub,
// shift is chosen so that v>>shift lies in [histSub, 2*histSub), and the
// buckets of consecutive shifts follow each other without a gap.
func bucketOf(v uint64) int {
	if v < 2*histSub {
		return int(v)
	}
	shift := bits.Len64(v) - histSubBits - 1
	if shift > histMaxShift {
		return histBuckets - 1
	}
	return shift*histSub + int(v>>shift)
}

// bucketValue is the middle of bucket i, in nanoseconds.
func bucketValue(i int) float64 {
	if i < 2*histSub {
		return float64(i)
	}
	shift := i/histSub - 1
	low := uint64(i-shift*histSub) << shift
	return float64(low) + float64(uint64(1)<<shift)/2
}

func (h *waitHistogram) record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.counts[bucketOf(uint64(d))]++
}

func (h *waitHistogram) merge(o *waitHistogram) {
	for i, c := range o.counts {
		h.counts[i] += c
	}
}

func (h *waitHistogram) total() uint64 {
	var n uint64
	for _, c := range h.counts {
		n += c
	}
	return n
}

// quantile returns the wait at or below which a fraction q of the recorded
// waits lie (nearest rank), or 0 when nothing was recorded.
func (h *waitHistogram) quantile(q float64) float64 {
	n := h.total()
	if n == 0 {
		return 0
	}
	rank := uint64(q*float64(n) + 0.5)
	rank = min(max(rank, 1), n)
	var seen uint64
	for i, c := range h.counts {
		seen += c
		if seen >= rank {
			return bucketValue(i)
		}
	}
	return bucketValue(histBuckets - 1)
}
