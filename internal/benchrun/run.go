package benchrun

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"
)

// Settings bound a run.
type Settings struct {
	Warmup   time.Duration // run, unmeasured, before measuring
	Duration time.Duration // the measured period
	// SetupTimeout bounds a case's Setup (dialling and warming its pool).
	SetupTimeout time.Duration
	// OpTimeout bounds one operation past the end of the period, so that a
	// server that stops answering cannot hold the run.
	OpTimeout time.Duration
}

// maxOpsPerRun bounds the operations of one phase, whatever the clock says.
const maxOpsPerRun = 50_000_000

// maxErrorsPerWorker stops a worker whose operations keep failing: the case
// has failed and hammering a broken server tells nothing more.
const maxErrorsPerWorker = 10

// phase is what the workers of one period did.
type phase struct {
	ops, errs int64
	firstErr  error
	elapsed   time.Duration
	lat, wait []*recorder
}

// RunCase sets c up, runs its operation with workers goroutines for
// s.Warmup and then s.Duration, and summarises the measured period. It never
// panics on a failing case: the Result says what went wrong. When ctx ends
// (Ctrl-C) the Result is StatusInterrupted.
func RunCase(ctx context.Context, c Case, workers int, s Settings) Result {
	res := Result{Name: c.Name, Workers: workers, Pool: c.Pool}
	if c.Skip != "" {
		res.Status, res.Reason = StatusSkipped, c.Skip
		return res
	}
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

	if s.Warmup > 0 {
		w := runPhase(ctx, inst.Op, c.Pooled, workers, s.Warmup, s.OpTimeout)
		if ctx.Err() != nil {
			res.Status, res.Reason = StatusInterrupted, "interrupted during warm-up"
			return res
		}
		if w.errs > 0 {
			res.Status, res.Reason = StatusFailed, fmt.Sprintf("warm-up: %d operations failed, first: %v", w.errs, w.firstErr)
			return res
		}
	}
	var connsBefore int64
	if inst.ConnsOpened != nil {
		connsBefore = inst.ConnsOpened()
	}
	if inst.Waits != nil {
		inst.Waits.start()
	}
	m := runPhase(ctx, inst.Op, c.Pooled, workers, s.Duration, s.OpTimeout)
	var observed *Wait
	if inst.Waits != nil {
		observed = inst.Waits.stop()
	}
	if inst.ConnsOpened != nil {
		opened := inst.ConnsOpened() - connsBefore
		res.ConnsOpened = &opened
	}
	res.Ops, res.Errors, res.Elapsed = m.ops, m.errs, m.elapsed
	if m.elapsed > 0 {
		res.IPS = float64(m.ops) / m.elapsed.Seconds()
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
	case m.errs > 0:
		res.Status = StatusFailed
		res.Reason = fmt.Sprintf("%d of %d operations failed, first: %v", m.errs, m.errs+m.ops, m.firstErr)
	case m.ops == 0:
		res.Status, res.Reason = StatusFailed, "no operation completed in the measured period"
	default:
		res.Status = StatusOK
	}
	return res
}

// runPhase runs op with workers goroutines until d has passed, ctx ends,
// or maxOpsPerRun operations are done.
func runPhase(ctx context.Context, op Op, pooled bool, workers int, d, opTimeout time.Duration) phase {
	workers = max(workers, 1)
	start := time.Now()
	deadline := start.Add(d)
	opCtx, cancel := context.WithDeadline(ctx, deadline.Add(opTimeout))
	defer cancel()

	perWorkerOps := int64(maxOpsPerRun / workers)
	perWorkerSamples := max(maxSamples/workers, 1)
	p := phase{lat: make([]*recorder, workers), wait: make([]*recorder, workers)}
	var (
		wg sync.WaitGroup
		mu sync.Mutex
	)
	for w := range workers {
		lat := newRecorder(perWorkerSamples, uint64(w)+1)
		wait := newRecorder(perWorkerSamples, uint64(w)+1<<32)
		p.lat[w], p.wait[w] = lat, wait
		wg.Go(func() {
			var ops, errs int64
			var firstErr error
			for ops+errs < perWorkerOps && errs < maxErrorsPerWorker {
				t0 := time.Now()
				// Every worker makes at least one operation, so that a
				// machine too busy to start the workers before the deadline
				// still yields a number instead of nothing.
				if (ops+errs > 0 && !t0.Before(deadline)) || opCtx.Err() != nil {
					break
				}
				acquireWait, err := op(opCtx)
				elapsed := time.Since(t0)
				if err != nil {
					if ctx.Err() != nil || errors.Is(err, context.Canceled) && opCtx.Err() != nil {
						break // interrupted, not failed
					}
					if firstErr == nil {
						firstErr = err
					}
					errs++
					continue
				}
				ops++
				lat.add(elapsed)
				if pooled {
					wait.add(acquireWait)
				}
			}
			mu.Lock()
			p.ops += ops
			p.errs += errs
			if p.firstErr == nil {
				p.firstErr = firstErr
			}
			mu.Unlock()
		})
	}
	wg.Wait()
	p.elapsed = time.Since(start)
	return p
}
