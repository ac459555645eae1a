package poolmetrics

import "time"

// DefaultBuckets returns the histogram buckets, in seconds, of the
// create, wait and use time histograms unless the user sets others: from
// 100µs, where an uncontended acquire or a loopback dial lands, to 10s,
// past any sane acquire timeout. A new slice each time, so that no
// package can change another's default.
func DefaultBuckets() []float64 {
	return []float64{.0001, .0005, .001, .005, .01, .05, .1, .5, 1, 5, 10}
}

// UnixSeconds returns t in seconds since the Unix epoch, with its
// fraction: a host's last check as a gauge's value.
func UnixSeconds(t time.Time) float64 {
	return float64(t.Unix()) + float64(t.Nanosecond())/float64(time.Second)
}
