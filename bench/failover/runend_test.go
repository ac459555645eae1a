package main

import (
	"testing"
	"time"
)

// An open end runs until set; set in the past, the run has ended.
func TestRunEnd(t *testing.T) {
	begin := time.Now().Add(-time.Hour)
	e := newRunEnd(begin, 0)
	if !e.running() {
		t.Fatal("an open end has ended")
	}
	e.set(time.Minute)
	if e.running() || e.left() > 0 || e.length() != time.Minute {
		t.Fatalf("set to a minute after a run begun an hour ago: running %v, left %v, length %v", e.running(), e.left(), e.length())
	}
	if e := newRunEnd(time.Now(), time.Hour); !e.running() || e.length() != time.Hour {
		t.Fatalf("an hour's run just begun: running %v, length %v", e.running(), e.length())
	}
}

// A rejoin run lasts its duration, or after past the rejoin when that is
// later.
func TestRejoinLength(t *testing.T) {
	s := time.Second
	for _, c := range []struct{ duration, after, rejoinedAt, want time.Duration }{
		{10 * s, 5 * s, 8 * s, 13 * s},
		{20 * s, 5 * s, 8 * s, 20 * s},
		{10 * s, 5 * s, 5 * s, 10 * s},
	} {
		if got := rejoinLength(c.duration, c.after, c.rejoinedAt); got != c.want {
			t.Errorf("rejoinLength(%v, %v, %v) = %v, want %v", c.duration, c.after, c.rejoinedAt, got, c.want)
		}
	}
}
