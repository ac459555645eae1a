package poolmetrics

import (
	"fmt"
	"math"
	"time"
)

// DefaultBuckets returns the histogram buckets, in seconds, of the
// create, wait and use time histograms unless the user sets others: from
// 100µs, where an uncontended acquire or a loopback dial lands, to 10s,
// past any sane acquire timeout. A new slice each time, so that no
// package can change another's default.
func DefaultBuckets() []float64 {
	return []float64{.0001, .0005, .001, .005, .01, .05, .1, .5, 1, 5, 10}
}

// CheckBuckets says what is wrong with histogram bounds b, or returns ""
// for good ones: every bound a number (not NaN, not infinite: the +Inf
// bucket is implied), in increasing order. shoalprom and shoalotel refuse
// the same bounds with the same words.
func CheckBuckets(b []float64) string {
	for i, v := range b {
		if math.IsNaN(v) || math.IsInf(v, 0) {
			return fmt.Sprintf("must be finite numbers, got %v", b)
		}
		if i > 0 && !(b[i-1] < v) {
			return fmt.Sprintf("must be in increasing order, got %v", b)
		}
	}
	return ""
}

// UnixSeconds returns t in seconds since the Unix epoch, with its
// fraction: a host's last check as a gauge's value.
func UnixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/float64(time.Second)
}
