package core

import (
	"math"
	"testing"
	"time"
)

func TestHistogramBuckets(t *testing.T) {
	prev := -1
	for v := uint64(0); v < 1<<22; v++ {
		b := bucketOf(v)
		if b != prev && b != prev+1 {
			t.Fatalf("bucketOf(%d) = %d after %d: buckets must be contiguous", v, b, prev)
		}
		prev = b
		mid := bucketValue(b)
		if v >= 2*histSub && math.Abs(mid-float64(v))/float64(v) > 1.0/histSub {
			t.Fatalf("bucketValue(bucketOf(%d)) = %v: off by more than 1/%d", v, mid, histSub)
		}
		if v < 2*histSub && mid != float64(v) {
			t.Fatalf("small value %d not exact: %v", v, mid)
		}
	}
	if b := bucketOf(math.MaxUint64); b != histBuckets-1 {
		t.Fatalf("bucketOf(max) = %d, want the last bucket %d", b, histBuckets-1)
	}
}

func TestHistogramQuantiles(t *testing.T) {
	var h waitHistogram
	if got := h.quantile(0.5); got != 0 {
		t.Fatalf("empty histogram: p50 = %v, want 0", got)
	}
	// 1..1000 µs, one each.
	for i := 1; i <= 1000; i++ {
		h.record(time.Duration(i) * time.Microsecond)
	}
	var other waitHistogram
	other.merge(&h)
	for _, c := range []struct{ q, want float64 }{
		{0.5, 500e3}, {0.99, 990e3}, {0.999, 999e3}, {1, 1000e3},
	} {
		got := other.quantile(c.q)
		if math.Abs(got-c.want)/c.want > 1.0/histSub {
			t.Errorf("quantile(%v) = %v, want %v within %.1f%%", c.q, got, c.want, 100.0/histSub)
		}
	}
}
