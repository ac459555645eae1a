package main

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// callResult is one run of concurrent callers against the sleep server.
type callResult struct {
	perSec   float64
	shortP50 time.Duration // latency of the calls that asked for 1 ms
	shortP99 time.Duration
	cpu      time.Duration // process CPU time (user+system) per call
}

// lengthFunc draws how many milliseconds the next call sleeps.
type lengthFunc func(rng *rand.Rand) int32

// uniform20 is every call sleeping 20 ms.
func uniform20(*rand.Rand) int32 { return 20 }

// uniform200 is every call sleeping 200 ms: the same stream limit at a
// tenth of the CPU per second, so that the machine's cores are not what
// bounds calls/s.
func uniform200(*rand.Rand) int32 { return 200 }

// mixed is 10% of calls sleeping 200 ms and 90% sleeping 1 ms.
func mixed(rng *rand.Rand) int32 {
	if rng.IntN(10) == 0 {
		return 200
	}
	return 1
}

// runCalls runs callers goroutines, each making one call at a time through
// c, for d, and returns calls/s and the latency of the 1 ms calls. The
// first error stops the run.
func runCalls(c conn, callers int, d time.Duration, length lengthFunc) (callResult, error) {
	client := testpb.NewTestServiceClient(c)
	var (
		stop     atomic.Bool
		total    atomic.Int64
		wg       sync.WaitGroup
		mu       sync.Mutex
		shorts   []time.Duration
		errOnce  sync.Once
		firstErr error
	)
	ctx := context.Background()
	cpuStart := processCPU()
	start := time.Now()
	for i := range callers {
		wg.Go(func() {
			rng := rand.New(rand.NewPCG(42, uint64(i)))
			var mine []time.Duration
			for !stop.Load() {
				ms := length(rng)
				t0 := time.Now()
				_, err := client.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: ms})
				if err != nil {
					errOnce.Do(func() { firstErr = fmt.Errorf("caller %d: %w", i, err) })
					stop.Store(true)
					return
				}
				total.Add(1)
				if ms == 1 {
					mine = append(mine, time.Since(t0))
				}
			}
			mu.Lock()
			shorts = append(shorts, mine...)
			mu.Unlock()
		})
	}
	time.Sleep(d)
	stop.Store(true)
	wg.Wait()
	elapsed := time.Since(start)
	cpu := processCPU() - cpuStart
	if firstErr != nil {
		return callResult{}, firstErr
	}
	r := callResult{perSec: float64(total.Load()) / elapsed.Seconds()}
	if n := total.Load(); n > 0 {
		r.cpu = cpu / time.Duration(n)
	}
	if len(shorts) > 0 {
		slices.Sort(shorts)
		r.shortP50 = shorts[len(shorts)/2]
		r.shortP99 = shorts[len(shorts)*99/100]
	}
	return r, nil
}

// streamLimit measures one contender on the sleep server: a short warm-up
// that opens the connections, then the measured run.
func streamLimit(ct contender, addr string, callers int, d time.Duration, length lengthFunc) (callResult, error) {
	c, err := ct.open(addr)
	if err != nil {
		return callResult{}, err
	}
	defer c.Close()
	if _, err := runCalls(c, callers, 300*time.Millisecond, length); err != nil {
		return callResult{}, fmt.Errorf("warm-up: %w", err)
	}
	return runCalls(c, callers, d, length)
}

// processCPU is the CPU time the process has used, user and system: client
// and in-process server together.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
