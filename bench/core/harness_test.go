package core

import (
	"context"
	"runtime"
	"sync/atomic"
	"testing"
	"time"
)

// scenario is one shape of load on a pool.
type scenario struct {
	name string
	// goroutines acquiring at once; 0 means serially, on the benchmark's
	// own goroutine.
	goroutines int
	// work: hold each lease for workDuration of spinning.
	work bool
}

// contender is a pool under test with its type erased, so that pools
// handing out different types sit in one table.
type contender struct {
	name string
	// run times sc on a fresh, warm pool. With recordWaits set it also
	// clocks every acquire and reports the wait percentiles.
	run func(b *testing.B, sc scenario, recordWaits bool)
	// smoke exercises the pool briefly, for the tests.
	smoke func(t *testing.T)
}

func contenderOf[H any](name string, open func(context.Context) (benchPool[H], error)) contender {
	return contender{
		name:  name,
		run:   func(b *testing.B, sc scenario, recordWaits bool) { runScenario(b, open, sc, recordWaits) },
		smoke: func(t *testing.T) { smoke(t, open) },
	}
}

// runScenario opens a warm pool, times sc on it, closes it and checks that
// nothing it started is still running, so no pool leaks goroutines or
// busy work into the benchmarks after it.
func runScenario[H any](b *testing.B, open func(context.Context) (benchPool[H], error), sc scenario, recordWaits bool) {
	b.ReportAllocs()
	goroutinesBefore := runtime.NumGoroutine()
	ctx := context.Background()
	p, err := open(ctx)
	if err != nil {
		b.Fatal(err)
	}
	spins := 0
	if sc.work {
		spins = workSpins()
	}

	loopers := 1
	if sc.goroutines > 0 {
		loopers = setParallelism(b, sc.goroutines)
	}
	var hists []*waitHistogram
	if recordWaits {
		// Allocated before the timer starts: recording allocates nothing.
		hists = make([]*waitHistogram, loopers)
		for i := range hists {
			hists[i] = new(waitHistogram)
		}
	}
	waitsBefore := p.waits()
	if sc.goroutines == 0 {
		err = loopSerial(b, p, spins, hists)
	} else {
		err = loopParallel(b, p, spins, hists)
	}
	b.StopTimer()
	if err != nil {
		b.Error(err)
	}
	if waitsAfter := p.waits(); waitsBefore >= 0 && b.N > 0 {
		// Read outside the timed loop; every pool counts its own waits.
		b.ReportMetric(float64(waitsAfter-waitsBefore)/float64(b.N), "waited/op")
	}
	if err := p.close(); err != nil {
		b.Error(err)
	}
	awaitGoroutines(b, goroutinesBefore)
	if err == nil && recordWaits {
		reportWaits(b, hists)
	}
}

// loopSerial is the one-goroutine loop. The clocked and unclocked loops are
// separate so that the unclocked one has no branch for the clock either.
//
// It also reports cpu-ns/op: the CPU time of the loop's OS thread (the
// goroutine is locked to it) per operation, read once before and once
// after the loop. On a machine that other processes keep busy, wall-clock
// ns/op includes the time the thread sat descheduled; cpu-ns/op does not.
func loopSerial[H any](b *testing.B, p benchPool[H], spins int, hists []*waitHistogram) error {
	runtime.LockOSThread()
	defer runtime.UnlockOSThread()
	cpuBefore, cpuOK := threadCPU()
	defer func() {
		if cpuAfter, ok := threadCPU(); cpuOK && ok && b.N > 0 {
			b.ReportMetric(float64(cpuAfter-cpuBefore)/float64(b.N), "cpu-ns/op")
		}
	}()
	ctx := context.Background()
	var x uint64
	if hists == nil {
		for b.Loop() {
			h, err := p.acquire(ctx)
			if err != nil {
				return err
			}
			if spins > 0 {
				x = spin(spins, x)
			}
			p.release(h)
		}
	} else {
		hist := hists[0]
		for b.Loop() {
			start := time.Now()
			h, err := p.acquire(ctx)
			hist.record(time.Since(start))
			if err != nil {
				return err
			}
			if spins > 0 {
				x = spin(spins, x)
			}
			p.release(h)
		}
	}
	spinSink.Add(x)
	return nil
}

// setParallelism makes RunParallel start exactly `goroutines` goroutines
// when GOMAXPROCS divides it (RunParallel starts parallelism*GOMAXPROCS of
// them), and the next multiple of GOMAXPROCS otherwise; it returns how many.
func setParallelism(b *testing.B, goroutines int) int {
	procs := runtime.GOMAXPROCS(0)
	parallelism := (goroutines + procs - 1) / procs
	started := parallelism * procs
	if started != goroutines {
		b.Logf("GOMAXPROCS=%d does not divide %d: running %d goroutines", procs, goroutines, started)
	}
	b.SetParallelism(parallelism)
	return started
}

// loopParallel is the many-goroutine loop. With hists set, each goroutine
// clocks every acquire into a histogram of its own, so recording takes no
// lock and shares no cache line; they are merged after the run.
func loopParallel[H any](b *testing.B, p benchPool[H], spins int, hists []*waitHistogram) error {
	var nextHist atomic.Int32
	var firstErr atomic.Pointer[error]
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		ctx := context.Background()
		var x uint64
		fail := func(err error) {
			firstErr.CompareAndSwap(nil, &err)
			b.Error(err)
		}
		if hists == nil {
			for pb.Next() {
				h, err := p.acquire(ctx)
				if err != nil {
					fail(err)
					return
				}
				if spins > 0 {
					x = spin(spins, x)
				}
				p.release(h)
			}
		} else {
			hist := hists[nextHist.Add(1)-1]
			for pb.Next() {
				start := time.Now()
				h, err := p.acquire(ctx)
				hist.record(time.Since(start))
				if err != nil {
					fail(err)
					return
				}
				if spins > 0 {
					x = spin(spins, x)
				}
				p.release(h)
			}
		}
		spinSink.Add(x)
	})
	b.StopTimer()
	if e := firstErr.Load(); e != nil {
		return *e
	}
	return nil
}

// reportWaits merges the per-goroutine histograms and reports the
// acquire-wait percentiles of the run.
func reportWaits(b *testing.B, hists []*waitHistogram) {
	var all waitHistogram
	for _, h := range hists {
		all.merge(h)
	}
	b.ReportMetric(all.quantile(0.50), "p50-ns")
	b.ReportMetric(all.quantile(0.99), "p99-ns")
	b.ReportMetric(all.quantile(0.999), "p99.9-ns")
}

// awaitGoroutines waits until no more goroutines run than before the pool
// was opened, and fails the benchmark with a dump of them if that takes
// longer than leakGrace: a pool must not leave work behind.
func awaitGoroutines(tb testing.TB, before int) {
	const leakGrace = 5 * time.Second
	deadline := time.Now().Add(leakGrace)
	for runtime.NumGoroutine() > before {
		if time.Now().After(deadline) {
			buf := make([]byte, 1<<20)
			buf = buf[:runtime.Stack(buf, true)]
			tb.Errorf("%d goroutines still running %v after the pool closed, %d before it opened:\n%s",
				runtime.NumGoroutine(), leakGrace, before, buf)
			return
		}
		time.Sleep(time.Millisecond)
	}
}

// smoke opens a pool, runs poolSize*4 goroutines through it for a moment,
// and checks that it closes cleanly.
func smoke[H any](t *testing.T, open func(context.Context) (benchPool[H], error)) {
	before := runtime.NumGoroutine()
	ctx := context.Background()
	p, err := open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, poolSize*4)
	for range cap(errs) {
		go func() {
			for range 1000 {
				h, err := p.acquire(ctx)
				if err != nil {
					errs <- err
					return
				}
				p.release(h)
			}
			errs <- nil
		}()
	}
	for range cap(errs) {
		if err := <-errs; err != nil {
			t.Error(err)
		}
	}
	if err := p.close(); err != nil {
		t.Error(err)
	}
	awaitGoroutines(t, before)
}
