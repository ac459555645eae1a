package benchrun

import (
	"math"
	"math/rand/v2"
	"time"
)

// maxSamples bounds the latency samples one run keeps across all its
// workers (8 bytes each). Past it each worker keeps a uniform random sample
// of what it saw (reservoir sampling, Vitter's algorithm R), so percentiles
// stay unbiased and memory stays bounded however fast the operation is.
const maxSamples = 1 << 20

// recorder collects one worker's latencies. It is not safe for concurrent
// use: each worker has its own and they are merged at the end.
type recorder struct {
	samples []time.Duration
	limit   int
	seen    int64 // observations offered, for the reservoir
	rng     *rand.PCG

	// Welford's running mean and sum of squared deviations give an exact
	// mean and deviation even when samples are dropped.
	n    int64
	mean float64
	m2   float64
}

func newRecorder(limit int, seed uint64) *recorder {
	return &recorder{
		samples: make([]time.Duration, 0, min(limit, 4096)),
		limit:   max(limit, 1),
		rng:     rand.NewPCG(seed, seed^0x9e3779b97f4a7c15),
	}
}

// add records one observation.
func (r *recorder) add(d time.Duration) {
	r.n++
	delta := float64(d) - r.mean
	r.mean += delta / float64(r.n)
	r.m2 += delta * (float64(d) - r.mean)

	r.seen++
	if len(r.samples) < r.limit {
		r.samples = append(r.samples, d)
		return
	}
	if j := r.rng.Uint64() % uint64(r.seen); j < uint64(r.limit) {
		r.samples[j] = d
	}
}

// moments is a merged count, mean and sum of squared deviations.
type moments struct {
	n    int64
	mean float64
	m2   float64
}

// merge combines recorders' moments (Chan et al.'s parallel formula).
func merge(rs []*recorder) moments {
	var m moments
	for _, r := range rs {
		if r.n == 0 {
			continue
		}
		n := m.n + r.n
		delta := r.mean - m.mean
		m.mean += delta * float64(r.n) / float64(n)
		m.m2 += r.m2 + delta*delta*float64(m.n)*float64(r.n)/float64(n)
		m.n = n
	}
	return m
}

// stddev returns the sample standard deviation.
func (m moments) stddev() float64 {
	if m.n < 2 {
		return 0
	}
	return math.Sqrt(m.m2 / float64(m.n-1))
}
