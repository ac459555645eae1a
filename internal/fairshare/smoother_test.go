package fairshare

import (
	"testing"
	"time"
)

func TestSmoother(t *testing.T) {
	s := Smoother{Window: 2 * time.Second}
	t0 := time.Unix(1000, 0)
	at := func(ms int) time.Time { return t0.Add(time.Duration(ms) * time.Millisecond) }
	steps := []struct {
		ms, v, want int
	}{
		{0, 1, 1},
		{100, 5, 5},  // a rise shows at once
		{200, 0, 5},  // a dip does not
		{1500, 2, 5}, // still within the window of the 5
		{2100, 0, 2}, // the 5 is older than the window; the 2 is not
		{3600, 0, 0}, // nor is the 2 now
		{3700, 3, 3}, // and up again
		{3800, 3, 3}, // equal samples collapse into the newest
		{5700, 0, 3}, // measured from the last 3
		{5850, 0, 0},
	}
	for _, st := range steps {
		if got := s.Add(at(st.ms), st.v); got != st.want {
			t.Fatalf("at %dms add(%d) = %d, want %d", st.ms, st.v, got, st.want)
		}
	}
	if len(s.samples) > 2 {
		t.Fatalf("kept %d samples", len(s.samples))
	}
}

func TestSmootherExpires(t *testing.T) {
	s := Smoother{Window: time.Second}
	t0 := time.Unix(1000, 0)
	if _, ok := s.Expires(); ok {
		t.Fatal("an empty smoother expires")
	}
	s.Add(t0, 4)
	if _, ok := s.Expires(); ok {
		t.Fatal("one sample expires, though nothing lower is kept")
	}
	s.Add(t0.Add(300*time.Millisecond), 1)
	at, ok := s.Expires()
	if !ok || !at.Equal(t0.Add(time.Second)) {
		t.Fatalf("Expires() = %v, %v; want %v, true", at, ok, t0.Add(time.Second))
	}
	if got := s.Add(at, 1); got != 1 {
		t.Fatalf("at expiry the smoothed demand is %d, want 1", got)
	}
	if got := s.Add(at.Add(-time.Nanosecond), 1); got != 1 {
		t.Fatalf("after the fall: %d, want 1", got)
	}
}

func TestSmootherZeroWindow(t *testing.T) {
	var s Smoother
	t0 := time.Unix(1000, 0)
	for i, v := range []int{5, 2, 7, 0} {
		if got := s.Add(t0.Add(time.Duration(i)*time.Millisecond), v); got != v {
			t.Fatalf("zero window: Add(%d) = %d", v, got)
		}
	}
}
