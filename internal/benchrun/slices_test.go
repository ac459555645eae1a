package benchrun

import (
	"math"
	"testing"
	"time"
)

// TestSlicesApportionByTime: an operation counts in each slice for the
// share of its time it spent there, and nothing for its time outside the
// window.
func TestSlicesApportionByTime(t *testing.T) {
	start := time.Unix(1000, 0)
	s := newSliceRecorder(start, 100*time.Millisecond) // ten slices of 10ms
	ms := func(n int) time.Duration { return time.Duration(n) * time.Millisecond }
	s.add(start.Add(ms(5)), ms(10))   // half in slice 0, half in slice 1
	s.add(start.Add(ms(-10)), ms(20)) // began in the warm-up: half in slice 0
	s.add(start.Add(ms(95)), ms(20))  // a quarter in slice 9, the rest after the window
	s.add(start.Add(ms(20)), 0)       // too quick for the clock: all in slice 2
	want := [sliceCount]float64{1, 0.5, 1, 0, 0, 0, 0, 0, 0, 0.25}
	for k := range want {
		if math.Abs(s.ops[k]-want[k]) > 1e-9 {
			t.Fatalf("slices %v, want %v", s.ops, want)
		}
	}
	got := summarizeSlices([]*sliceRecorder{s, s})
	if math.Abs(got[0]-200) > 1e-9 { // 2 operations in 10ms
		t.Errorf("slice 0 of two workers: %v ops/s, want 200", got[0])
	}
}

// TestSlicesOfWorkersInStep: 400 workers whose 100ms operations start
// together read the same in every 40ms slice, not 400 and 0 in turn.
func TestSlicesOfWorkersInStep(t *testing.T) {
	start := time.Unix(1000, 0)
	s := newSliceRecorder(start, 400*time.Millisecond)
	for w := 0; w < 400; w++ {
		for at := time.Duration(0); at < 400*time.Millisecond; at += 100 * time.Millisecond {
			s.add(start.Add(at), 100*time.Millisecond)
		}
	}
	for k, ips := range summarizeSlices([]*sliceRecorder{s}) {
		if math.Abs(ips-4000) > 1e-6 {
			t.Fatalf("slice %d: %v ops/s, want 4000 in each", k, ips)
		}
	}
}
