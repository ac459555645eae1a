package main

import (
	"math/bits"
	"time"
)

// histogram counts latencies in buckets of 1/16 of a power of two, so that
// workers in other processes can send theirs to the runner in a few
// kilobytes and the runner can merge them; a percentile read back is the
// middle of its bucket, within 3% of the true value.
type histogram struct {
	Counts [histBuckets]uint64
}

// subBits is log2 of the buckets per power of two.
const (
	subBits     = 4
	subBuckets  = 1 << subBits
	histBuckets = subBuckets + (64-subBits)*subBuckets
)

// bucket returns the bucket of a latency of ns nanoseconds: values below
// 16ns one each, then 16 buckets per power of two.
func bucket(ns uint64) int {
	if ns < subBuckets {
		return int(ns)
	}
	e := bits.Len64(ns) - 1 // ns is in [2^e, 2^(e+1))
	sub := int(ns>>(e-subBits)) & (subBuckets - 1)
	return subBuckets + (e-subBits)*subBuckets + sub
}

// bucketMid returns the middle of bucket b, in nanoseconds.
func bucketMid(b int) uint64 {
	if b < subBuckets {
		return uint64(b)
	}
	e := (b-subBuckets)/subBuckets + subBits
	sub := uint64((b - subBuckets) % subBuckets)
	width := uint64(1) << (e - subBits)
	low := uint64(1)<<e + sub*width
	return low + width/2
}

// record counts one latency.
func (h *histogram) record(d time.Duration) {
	if d < 0 {
		d = 0
	}
	h.Counts[bucket(uint64(d))]++
}

// merge adds o's counts to h.
func (h *histogram) merge(o *histogram) {
	for i, c := range o.Counts {
		h.Counts[i] += c
	}
}

// total is the number of latencies counted.
func (h *histogram) total() uint64 {
	var n uint64
	for _, c := range h.Counts {
		n += c
	}
	return n
}

// quantile returns the latency below which a share q of the counted ones
// lie (0 when none were counted).
func (h *histogram) quantile(q float64) time.Duration {
	n := h.total()
	if n == 0 {
		return 0
	}
	rank := uint64(q * float64(n-1)) // 0-based rank of the wanted latency
	var seen uint64
	for b, c := range h.Counts {
		seen += c
		if seen > rank {
			return time.Duration(bucketMid(b))
		}
	}
	return time.Duration(bucketMid(histBuckets - 1))
}
