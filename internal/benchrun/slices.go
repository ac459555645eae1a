package benchrun

import "time"

// sliceCount is how many equal slices the measured window is cut into to
// see how much the throughput varied while it ran: enough for a spread,
// few enough that each slice holds many operations.
const sliceCount = 10

// sliceRecorder apportions one worker's operations to the slices of the
// window by the time each spent in them: an operation of 100ms that began
// 30ms before a slice ended counts 0.3 there and 0.7 in the next. Counting
// whole operations where they end would make the slices of workers that
// move in step (400 requests of 100ms, started together) read 400 and 0 in
// turn. It is not safe for concurrent use: each worker has its own.
type sliceRecorder struct {
	start time.Time
	width time.Duration // of one slice
	ops   [sliceCount]float64
}

func newSliceRecorder(start time.Time, window time.Duration) *sliceRecorder {
	return &sliceRecorder{start: start, width: max(window/sliceCount, 1)}
}

// add counts an operation that started at t0 and took elapsed. What it
// did before the window began or after it ended is not counted.
func (s *sliceRecorder) add(t0 time.Time, elapsed time.Duration) {
	from := t0.Sub(s.start)
	to := from + elapsed
	if elapsed <= 0 {
		if k := int(from / s.width); from >= 0 && k < sliceCount {
			s.ops[k]++
		}
		return
	}
	for k := int(max(from, 0) / s.width); k < sliceCount; k++ {
		lo, hi := time.Duration(k)*s.width, time.Duration(k+1)*s.width
		if lo >= to {
			break
		}
		s.ops[k] += float64(min(hi, to)-max(lo, from)) / float64(elapsed)
	}
}

// summarizeSlices returns the throughput of each slice over all workers;
// a nil recorder is a worker that did nothing in the window.
func summarizeSlices(rs []*sliceRecorder) []float64 {
	var width time.Duration
	out := make([]float64, sliceCount)
	for _, r := range rs {
		if r == nil {
			continue
		}
		width = r.width
		for k, n := range r.ops {
			out[k] += n
		}
	}
	if width == 0 {
		return nil
	}
	secs := width.Seconds()
	for k := range out {
		out[k] /= secs
	}
	return out
}
