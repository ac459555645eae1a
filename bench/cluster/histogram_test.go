package main

import (
	"math"
	"testing"
	"time"
)

// Every value lands in a bucket whose middle is within 3% of it, and the
// buckets are in order.
func TestBucketsAreNarrowAndOrdered(t *testing.T) {
	prev := -1
	for _, v := range []uint64{0, 1, 15, 16, 17, 31, 32, 33, 1000, 1023, 1024, 123456, 1e9, 5e10, math.MaxUint64 / 2} {
		b := bucket(v)
		if b < prev || b >= histBuckets {
			t.Fatalf("bucket(%d) = %d after %d (of %d)", v, b, prev, histBuckets)
		}
		prev = b
		if mid := bucketMid(b); v >= 16 && math.Abs(float64(mid)-float64(v)) > 0.032*float64(v) {
			t.Errorf("value %d: bucket middle %d is off by more than 3%%", v, mid)
		}
	}
}

// Quantiles of a merged histogram are those of all the values together.
func TestQuantilesAfterMerge(t *testing.T) {
	var a, b histogram
	for i := 1; i <= 990; i++ {
		a.record(time.Millisecond)
	}
	for i := 1; i <= 10; i++ {
		b.record(100 * time.Millisecond)
	}
	a.merge(&b)
	if n := a.total(); n != 1000 {
		t.Fatalf("total %d, want 1000", n)
	}
	near := func(got, want time.Duration) bool { return math.Abs(float64(got-want)) <= 0.032*float64(want) }
	if p50 := a.quantile(0.5); !near(p50, time.Millisecond) {
		t.Errorf("p50 = %v, want about 1ms", p50)
	}
	if p999 := a.quantile(0.999); !near(p999, 100*time.Millisecond) {
		t.Errorf("p99.9 = %v, want about 100ms", p999)
	}
	var empty histogram
	if q := empty.quantile(0.99); q != 0 {
		t.Errorf("quantile of nothing = %v, want 0", q)
	}
}
