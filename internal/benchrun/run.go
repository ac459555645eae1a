package benchrun

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"gonum.org/v1/gonum/stat"
)

// Settings bound a run.
type Settings struct {
	// Warmup is run, unmeasured, before measuring: at least this long
	// and, unless it is zero, until every worker has finished an
	// operation (at most OpTimeout more).
	Warmup   time.Duration
	Duration time.Duration // the measured period
	// SetupTimeout bounds a case's Setup (dialling and warming its pool).
	SetupTimeout time.Duration
	// OpTimeout bounds one operation past the end of the period, so that a
	// server that stops answering cannot hold the run.
	OpTimeout time.Duration
}

// maxOpsPerRun bounds the measured operations of one run, whatever the
// clock says.
const maxOpsPerRun = 50_000_000

// maxErrorsPerWorker stops a worker whose operations keep failing: the case
// has failed and hammering a broken server tells nothing more.
const maxErrorsPerWorker = 10

// phase is what the workers did in one part of a run: the warm-up or the
// measured window.
type phase struct {
	ops, errs int64
	firstErr  error
}

// record adds a worker's counts to p.
func (p *phase) record(ops, errs int64, firstErr error) {
	p.ops += ops
	p.errs += errs
	if p.firstErr == nil {
		p.firstErr = firstErr
	}
}

// run is what the workers of a case did.
type run struct {
	warm, measured phase
	// elapsed runs from the window's start to the end of the last
	// operation started in it.
	elapsed   time.Duration
	lat, wait []*recorder
	slices    []*sliceRecorder
	// began reports whether the measured window began (Ctrl-C may end
	// the run in its warm-up).
	began bool
}

// RunCase sets c up, runs its operation with workers goroutines for
// s.Warmup and then, without stopping them, s.Duration, and summarises
// that measured window. It never
// panics on a failing case: the Result says what went wrong. When ctx ends
// (Ctrl-C) the Result is StatusInterrupted.
func RunCase(ctx context.Context, c Case, workers int, s Settings) Result {
	res := Result{Name: c.Name, Workers: workers, Pool: c.Pool}
	if c.Skip != "" {
		res.Status, res.Reason = StatusSkipped, c.Skip
		return res
	}
	res.Rounds = 1 // a run that ends early too: its figures are this one's
	setupCtx, cancel := context.WithTimeout(ctx, s.SetupTimeout)
	inst, err := c.Setup(setupCtx)
	cancel()
	if err != nil {
		if ctx.Err() != nil {
			res.Status, res.Reason = StatusInterrupted, "interrupted during setup"
			return res
		}
		res.Status, res.Reason = StatusFailed, "setup: "+err.Error()
		return res
	}
	defer func() {
		if inst.Close != nil {
			if err := inst.Close(); err != nil && res.Status == StatusOK {
				res.Status, res.Reason = StatusFailed, "close: "+err.Error()
			}
		}
	}()

	var connsBefore int64
	atWindow := func() {
		if inst.ConnsOpened != nil {
			connsBefore = inst.ConnsOpened()
		}
		if inst.Waits != nil {
			inst.Waits.start()
		}
	}
	m := runWorkers(ctx, inst.Op, c.Pooled, workers, s, atWindow)
	var observed *Wait
	if inst.Waits != nil {
		observed = inst.Waits.stop()
	}
	switch {
	case ctx.Err() != nil && !m.began:
		res.Status, res.Reason = StatusInterrupted, "interrupted during warm-up"
		return res
	case m.warm.errs > 0:
		res.Status, res.Reason = StatusFailed, fmt.Sprintf("warm-up: %d operations failed, first: %v", m.warm.errs, m.warm.firstErr)
		return res
	}
	if inst.ConnsOpened != nil {
		total := inst.ConnsOpened()
		opened := total - connsBefore
		res.ConnsOpened, res.ConnsOpenedTotal = &opened, &total
	}
	res.Ops, res.Errors, res.Elapsed = m.measured.ops, m.measured.errs, m.elapsed
	res.Window, res.SliceIPS = s.Duration, summarizeSlices(m.slices)
	if len(res.SliceIPS) > 0 {
		res.IPS = stat.Mean(res.SliceIPS, nil)
	}
	res.Latency = summarizeLatency(m.lat)
	switch {
	case observed != nil:
		res.AcquireWait = observed
	case c.Pooled:
		res.AcquireWait = summarizeWait(m.wait)
	}
	switch {
	case ctx.Err() != nil:
		res.Status, res.Reason = StatusInterrupted, "interrupted while measuring"
	case m.measured.errs > 0:
		res.Status = StatusFailed
		res.Reason = fmt.Sprintf("%d of %d operations failed, first: %v", m.measured.errs, m.measured.errs+m.measured.ops, m.measured.firstErr)
	case m.measured.ops == 0:
		res.Status, res.Reason = StatusFailed, "no operation completed in the measured period"
	default:
		res.Status = StatusOK
	}
	return res
}

// runWorkers runs op with workers goroutines through the warm-up and then
// the measured window, without stopping between them: the window sees
// the pool, the server and the workers as the warm-up left them, not
// workers starting all at once. The warm-up lasts s.Warmup and, when that
// is not zero, until every worker has finished an operation (at most
// s.OpTimeout longer): a queue of 400 workers on one connection takes
// four of its 100ms requests to fill, and a window that opens before it
// has filled measures the filling. atWindow is called once, when the
// window begins. A worker stops when the window has ended, ctx ends, or
// it has done maxOpsPerRun/workers operations or failed
// maxErrorsPerWorker times.
//
// An operation belongs to the part in which it started; the slices count
// every operation for the time it ran inside the window, those begun in
// the warm-up too, so that the window's throughput is the work done in it.
func runWorkers(ctx context.Context, op Op, pooled bool, workers int, s Settings, atWindow func()) run {
	workers = max(workers, 1)
	start := time.Now()
	warmed := start.Add(s.Warmup)
	latest := warmed
	if s.Warmup > 0 {
		latest = warmed.Add(s.OpTimeout)
	}
	opCtx, cancel := context.WithDeadline(ctx, latest.Add(s.Duration+s.OpTimeout))
	defer cancel()

	var (
		window    atomic.Pointer[time.Time] // nil until the window begins
		firstDone atomic.Int64              // workers done with their first operation
	)
	// begin returns the window's start, beginning it now if it is due.
	begin := func(now time.Time) (time.Time, bool) {
		if w := window.Load(); w != nil {
			return *w, true
		}
		due := !now.Before(warmed) && (s.Warmup == 0 || firstDone.Load() >= int64(workers))
		if !due && now.Before(latest) {
			return time.Time{}, false
		}
		if window.CompareAndSwap(nil, &now) {
			atWindow()
		}
		return *window.Load(), true
	}

	perWorkerOps := int64(maxOpsPerRun / workers)
	perWorkerSamples := max(maxSamples/workers, 1)
	r := run{lat: make([]*recorder, workers), wait: make([]*recorder, workers), slices: make([]*sliceRecorder, workers)}
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		lastDone time.Time
	)
	for w := range workers {
		lat := newRecorder(perWorkerSamples, uint64(w)+1)
		wait := newRecorder(perWorkerSamples, uint64(w)+1<<32)
		r.lat[w], r.wait[w] = lat, wait
		wg.Go(func() {
			var warm, measured phase
			var last time.Time
			var slices *sliceRecorder
			first := false
			for measured.ops+measured.errs < perWorkerOps && warm.errs+measured.errs < maxErrorsPerWorker {
				t0 := time.Now()
				ws, began := begin(t0)
				inWindow := began && !t0.Before(ws)
				// Every worker makes at least one measured operation, so
				// that a machine too busy to run the workers in time still
				// yields a number instead of nothing.
				if (measured.ops+measured.errs > 0 && !t0.Before(ws.Add(s.Duration))) || opCtx.Err() != nil {
					break
				}
				acquireWait, err := op(opCtx)
				elapsed := time.Since(t0)
				if !first {
					first = true
					firstDone.Add(1)
				}
				ws, began = begin(t0.Add(elapsed))
				part := &warm
				if inWindow {
					part = &measured
				}
				if err != nil {
					if ctx.Err() != nil || errors.Is(err, context.Canceled) && opCtx.Err() != nil {
						break // interrupted, not failed
					}
					if part.firstErr == nil {
						part.firstErr = err
					}
					part.errs++
					continue
				}
				part.ops++
				if began {
					if slices == nil {
						slices = newSliceRecorder(ws, s.Duration)
					}
					slices.add(t0, elapsed)
				}
				if !inWindow {
					continue
				}
				last = t0.Add(elapsed)
				lat.add(elapsed)
				if pooled {
					wait.add(acquireWait)
				}
			}
			if !first {
				firstDone.Add(1) // it stopped before finishing one: do not wait for it
			}
			mu.Lock()
			r.warm.record(warm.ops, warm.errs, warm.firstErr)
			r.measured.record(measured.ops, measured.errs, measured.firstErr)
			r.slices[w] = slices
			if last.After(lastDone) {
				lastDone = last
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	ws, began := window.Load(), window.Load() != nil
	r.began = began
	if began && !lastDone.IsZero() {
		r.elapsed = lastDone.Sub(*ws)
	}
	return r
}
