package core

import (
	"math"
	"os"
	"strconv"
	"sync"
	"sync/atomic"
	"time"
)

// workDuration is the "work" done while a lease is held in the *work
// scenarios: a few microseconds of CPU, standing in for a cheap query.
const workDuration = 2 * time.Microsecond

// spin burns CPU for n iterations of a dependent multiply-add chain. The
// chain cannot be vectorised or skipped, and returning its result (callers
// fold it into spinSink) keeps the compiler from deleting it. Unlike
// time.Sleep it keeps the goroutine on its core, as real work would, and it
// reads no clock.
func spin(n int, x uint64) uint64 {
	for i := 0; i < n; i++ {
		x = x*6364136223846793005 + 1442695040888963407
	}
	return x
}

// spinSink receives every spin result, so the work is observable.
var spinSink atomic.Uint64

// workSpinsEnv, when set to a positive number, fixes the spin count instead
// of calibrating, so that repeated runs (scripts/bench.sh runs the test
// binary once per round) do the same work.
const workSpinsEnv = "SHOAL_BENCH_WORK_SPINS"

// workSpins is the number of spin iterations that take workDuration on this
// machine, measured once per process unless workSpinsEnv says.
var workSpins = sync.OnceValue(func() int {
	if n, err := strconv.Atoi(os.Getenv(workSpinsEnv)); err == nil && n > 0 {
		return n
	}
	// Best of several trials: on a shared machine interference only ever
	// makes a trial slower, so the fastest trial is the closest to the
	// machine's own speed.
	const trialSpins = 1 << 20
	best := time.Duration(math.MaxInt64)
	for range 9 {
		start := time.Now()
		spinSink.Add(spin(trialSpins, uint64(start.UnixNano())))
		best = min(best, time.Since(start))
	}
	return max(1, int(float64(trialSpins)*float64(workDuration)/float64(best)))
})
