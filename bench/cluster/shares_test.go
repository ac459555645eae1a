package main

import (
	"testing"
	"time"
)

// timeline makes one sample every 100ms over [0, end], with share(t).
func timeline(end time.Duration, share func(time.Duration) int) []statSample {
	var tl []statSample
	for t := time.Duration(0); t <= end; t += sampleEvery {
		tl = append(tl, statSample{T: t, Share: share(t), Demand: 32, Conns: share(t), Dials: int64(t / time.Second)})
	}
	return tl
}

// The summary averages the measured window only, less its tail, and the
// shares count as settled from the first sample after which every worker
// stays within one of its mean: here when the hot worker grew, 1s after go.
func TestSummaryAndSettle(t *testing.T) {
	warmup, duration := 2*time.Second, 3*time.Second
	end := warmup + duration
	c := cell{timelines: [][]statSample{
		timeline(end, func(t time.Duration) int {
			switch {
			case t < time.Second:
				return 2
			case t >= end-windowTail/2: // the tail: another worker left
				return 40
			}
			return 25
		}),
		timeline(end, func(time.Duration) int { return 10 }),
	}}
	sums := summarize(c, warmup, duration)
	if sums[0].share != 25 || sums[1].share != 10 {
		t.Errorf("mean shares %.1f / %.1f, want 25 / 10 (the warm-up and the tail left out)", sums[0].share, sums[1].share)
	}
	if sums[0].dials != 2 {
		t.Errorf("dials in the window %d, want 2", sums[0].dials)
	}
	if got := settledAt(c, warmup, duration); got != time.Second {
		t.Errorf("settled at %v, want 1s", got)
	}
	// A share still moving at the window's end never settled.
	c.timelines[1] = timeline(end, func(t time.Duration) int { return 10 + int(t/time.Second)*3 })
	if got := settledAt(c, warmup, duration); got != -1 {
		t.Errorf("settled at %v for a share still growing, want -1", got)
	}
}

// The pools count as filled from the first sample at which every one held
// its mean share, less one, in connections: here when the slower one
// reached 9 of its 10, 1.5s after go.
func TestFilledAt(t *testing.T) {
	warmup, duration := 2*time.Second, 3*time.Second
	end := warmup + duration
	ten := func(time.Duration) int { return 10 }
	c := cell{timelines: [][]statSample{timeline(end, ten), timeline(end, ten)}}
	for i := range c.timelines[1] {
		s := &c.timelines[1][i]
		s.Conns = min(10, int(s.T/(100*time.Millisecond))*6/10)
	}
	if got := filledAt(c, warmup, duration); got != 1500*time.Millisecond {
		t.Errorf("filled at %v, want 1.5s", got)
	}
	for i := range c.timelines[1] {
		c.timelines[1][i].Conns = 5
	}
	if got := filledAt(c, warmup, duration); got != -1 {
		t.Errorf("filled at %v for a pool that never filled, want -1", got)
	}
	// A pool that needs fewer than its share is filled at its demand.
	for i := range c.timelines[1] {
		c.timelines[1][i].Demand = 5
	}
	if got := filledAt(c, warmup, duration); got != 0 {
		t.Errorf("filled at %v for a pool at its demand from go, want 0", got)
	}
}
