package benchrun

import (
	"math"
	"slices"
	"time"
)

// Latency summarises the latencies of a run. Durations are in nanoseconds
// in JSON, like every duration benchrun writes.
type Latency struct {
	Mean   time.Duration `json:"mean_ns"`   // of every operation measured
	StdDev time.Duration `json:"stddev_ns"` // the samples' standard deviation
	// DeviationPct is StdDev as a percentage of Mean, Benchee's "deviation".
	DeviationPct float64       `json:"deviation_pct"`
	Min          time.Duration `json:"min_ns"`    // the fastest operation
	Median       time.Duration `json:"median_ns"` // half the operations took less
	P99          time.Duration `json:"p99_ns"`    // the 99th percentile
	P999         time.Duration `json:"p999_ns"`   // the 99.9th percentile
	Max          time.Duration `json:"max_ns"`    // the slowest operation
	Samples      int           `json:"samples"`   // latencies kept for the percentiles, a bounded number
}

// Wait summarises how long pooled operations waited in Acquire.
type Wait struct {
	Mean time.Duration `json:"mean_ns"` // of every operation's wait
	P50  time.Duration `json:"p50_ns"`  // the median wait
	P99  time.Duration `json:"p99_ns"`  // the 99th percentile
	P999 time.Duration `json:"p999_ns"` // the 99.9th percentile
	Max  time.Duration `json:"max_ns"`  // the longest wait
}

// gather merges the workers' samples into one sorted slice.
func gather(rs []*recorder) []time.Duration {
	n := 0
	for _, r := range rs {
		n += len(r.samples)
	}
	all := make([]time.Duration, 0, n)
	for _, r := range rs {
		all = append(all, r.samples...)
	}
	slices.Sort(all)
	return all
}

// percentile returns the nearest-rank percentile p (0..100) of sorted.
func percentile(sorted []time.Duration, p float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	rank := int(math.Ceil(p / 100 * float64(len(sorted))))
	return sorted[min(max(rank-1, 0), len(sorted)-1)]
}

// summarizeLatency builds a Latency from the workers' recorders.
func summarizeLatency(rs []*recorder) Latency {
	m := merge(rs)
	sorted := gather(rs)
	if len(sorted) == 0 {
		return Latency{}
	}
	l := Latency{
		Mean:    time.Duration(m.mean),
		StdDev:  time.Duration(m.stddev()),
		Min:     sorted[0],
		Median:  percentile(sorted, 50),
		P99:     percentile(sorted, 99),
		P999:    percentile(sorted, 99.9),
		Max:     sorted[len(sorted)-1],
		Samples: len(sorted),
	}
	if m.mean > 0 {
		l.DeviationPct = m.stddev() / m.mean * 100
	}
	return l
}

// summarizeWait builds a Wait from the workers' acquire-wait recorders.
func summarizeWait(rs []*recorder) *Wait {
	m := merge(rs)
	sorted := gather(rs)
	if len(sorted) == 0 {
		return nil
	}
	return &Wait{
		Mean: time.Duration(m.mean),
		P50:  percentile(sorted, 50),
		P99:  percentile(sorted, 99),
		P999: percentile(sorted, 99.9),
		Max:  sorted[len(sorted)-1],
	}
}
