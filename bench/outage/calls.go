package main

import (
	"cmp"
	"context"
	"math"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"
)

// call is one query or request as its worker saw it, timed from the run's
// zero.
type call struct {
	start, end time.Duration
	err        error
}

// workerSpec is how the workers of an outage run call.
type workerSpec struct {
	workers  int
	deadline time.Duration // each call's
	// failPause is how long a worker waits after a failed call before its
	// next one (successful calls follow each other at once).
	failPause time.Duration
}

// workers runs a workerSpec's workers until stopped.
type workers struct {
	zero  time.Time
	stop  atomic.Bool
	wg    sync.WaitGroup
	calls [][]call // by worker; read only after wait
}

// startWorkers starts s.workers goroutines calling do, each call under its
// own s.deadline, until stop.
func startWorkers(zero time.Time, s workerSpec, do func(ctx context.Context) error) *workers {
	w := &workers{zero: zero, calls: make([][]call, s.workers)}
	for i := range s.workers {
		w.wg.Go(func() {
			calls := make([]call, 0, 1<<12)
			for !w.stop.Load() {
				start := time.Since(zero)
				ctx, cancel := context.WithTimeout(context.Background(), s.deadline)
				err := do(ctx)
				cancel()
				calls = append(calls, call{start: start, end: time.Since(zero), err: err})
				if err != nil && s.failPause > 0 && !w.stop.Load() {
					time.Sleep(s.failPause)
				}
			}
			w.calls[i] = calls
		})
	}
	return w
}

// end stops the workers and waits up to limit for them; false means some
// had not returned (a call that outlived its deadline), and their calls
// are missing from the figures.
func (w *workers) end(limit time.Duration) bool {
	w.stop.Store(true)
	return within(limit, w.wg.Wait)
}

// all returns every call, in order of their ends.
func (w *workers) all() []call {
	all := slices.Concat(w.calls...)
	slices.SortFunc(all, func(a, b call) int { return cmp.Compare(a.end, b.end) })
	return all
}

// never marks a time whose event did not happen within the run.
const never = time.Duration(math.MinInt64)

// Recovery is judged in buckets of bucketWidth: the first bucket after the
// server's return whose throughput is at least recoveryShare of the
// throughput before the outage. One bucket, not a run of them: on a
// shared 2-core machine the rate of short windows swings widely either
// way, so a rule that wanted several buckets in a row above the
// share would time the noise once the rate is back near it; recovery is a
// step (the connections are back or not), and its first bucket is when.
const (
	bucketWidth   = 10 * time.Millisecond
	recoveryShare = 0.8
)

// outageTimes are the moments of one outage, from the run's zero.
type outageTimes struct {
	warm     time.Duration // the throughput before is measured from here
	stop     time.Duration // the server was told to go
	down     time.Duration // it had gone
	back     time.Duration // it was told to come back
	returned time.Duration // it answered again
	end      time.Duration // the workers were stopped
}

// outageFigures are what the report shows of one outage run.
type outageFigures struct {
	served, failed    int
	failedBeforeStop  int
	failedAfterReturn int // failed calls begun after the return
	servedWhileDown   int // calls begun once the server had gone that succeeded before it returned: none can
	failedP50         time.Duration
	failedP99         time.Duration
	failedMax         time.Duration
	rateBefore        float64 // calls/s from warm to stop
	recovered         time.Duration
	dials             dialFigures // from stop to returned
	errs              []errCount
}

// errCount is one error message (digits made N) and how often it came.
type errCount struct {
	msg string
	n   int
}

func measureOutage(calls []call, t outageTimes, dials []attempt) outageFigures {
	f := outageFigures{recovered: never}
	var failedLat []time.Duration
	var okEnds []time.Duration
	byMsg := make(map[string]int)
	warmOK := 0
	for _, c := range calls {
		if c.err == nil {
			f.served++
			okEnds = append(okEnds, c.end)
			if c.end >= t.warm && c.end < t.stop {
				warmOK++
			}
			if c.start >= t.down && c.end < t.returned {
				f.servedWhileDown++
			}
			continue
		}
		f.failed++
		failedLat = append(failedLat, c.end-c.start)
		byMsg[oneLine(c.err)]++
		if c.end < t.stop {
			f.failedBeforeStop++
		}
		if c.start >= t.returned {
			f.failedAfterReturn++
		}
	}
	if t.stop > t.warm {
		f.rateBefore = float64(warmOK) / (t.stop - t.warm).Seconds()
	}
	if n := len(failedLat); n > 0 {
		slices.Sort(failedLat)
		f.failedP50, f.failedP99, f.failedMax = failedLat[n/2], failedLat[min(n-1, n*99/100)], failedLat[n-1]
	}
	f.recovered = recoveryTime(okEnds, t.returned, t.end, f.rateBefore)
	f.dials = window(dials, t.stop, t.returned)
	f.errs = topErrors(byMsg)
	return f
}

// recoveryTime is the time from returned to the end of the first bucket
// with recoveryShare of rateBefore, or never. okEnds are sorted.
func recoveryTime(okEnds []time.Duration, returned, end time.Duration, rateBefore float64) time.Duration {
	n := int((end - returned) / bucketWidth)
	if n <= 0 || rateBefore <= 0 {
		return never
	}
	counts := make([]int, n)
	for _, e := range okEnds {
		if e < returned {
			continue
		}
		if k := int((e - returned) / bucketWidth); k < n {
			counts[k]++
		}
	}
	want := recoveryShare * rateBefore * bucketWidth.Seconds()
	for b, c := range counts {
		if float64(c) >= want {
			return time.Duration(b+1) * bucketWidth
		}
	}
	return never
}

// countSample is a count of connections at a moment of the run.
type countSample struct {
	at    time.Duration
	count int
}

// reachedAfter is the time from from to the first sample at or after it
// with at least want connections, or never.
func reachedAfter(samples []countSample, from time.Duration, want int) time.Duration {
	for _, s := range samples {
		if s.at >= from && s.count >= want {
			return s.at - from
		}
	}
	return never
}

// digits are replaced by N in error messages, so that the same error with
// other ports or counts is counted as one.
var digits = regexp.MustCompile(`[0-9]+`)

// oneLine is err's message on one line, digits made N.
func oneLine(err error) string {
	return digits.ReplaceAllString(strings.Join(strings.Fields(err.Error()), " "), "N")
}

// topErrors orders the messages most common first.
func topErrors(byMsg map[string]int) []errCount {
	errs := make([]errCount, 0, len(byMsg))
	for m, n := range byMsg {
		errs = append(errs, errCount{m, n})
	}
	slices.SortFunc(errs, func(a, b errCount) int { return cmp.Or(cmp.Compare(b.n, a.n), cmp.Compare(a.msg, b.msg)) })
	return errs
}
