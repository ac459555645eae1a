package main

import (
	"context"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// A round whose work stops for a while has a slowest window of nothing
// done and ends on time; a round held up by one stuck call ends far past
// its length while its slowest window still shows the other workers'
// work. Both pull the round's q/s down, which alone cannot tell them
// apart.
func TestRunForTellsAStallFromAStuckCall(t *testing.T) {
	const (
		workers = 4
		length  = time.Second
		call    = time.Millisecond // each worker's call: 4000 calls/s in all
	)
	// run runs the worker made by w, given the time the run starts, in a
	// bubble whose clock moves only when every goroutine waits.
	run := func(t *testing.T, w func(start time.Time) worker) measured {
		t.Helper()
		var m measured
		synctest.Test(t, func(t *testing.T) {
			var err error
			if m, err = runFor(context.Background(), workers, length, w(time.Now()), 1); err != nil {
				t.Fatal(err)
			}
		})
		return m
	}

	t.Run("work stops", func(t *testing.T) {
		m := run(t, func(start time.Time) worker {
			return func(ctx context.Context, g, i int) error {
				// Every worker is held from 400ms to 700ms into the round.
				if since := time.Since(start); since >= 400*time.Millisecond && since < 700*time.Millisecond {
					time.Sleep(700*time.Millisecond - since)
				}
				time.Sleep(call)
				return nil
			}
		})
		if m.slowest != 0 {
			t.Errorf("slowest window %.0f q/s, want 0 for a round whose work stopped for 300ms", m.slowest)
		}
		if m.wall < length || m.wall > length+10*call {
			t.Errorf("wall %v, want the round's length %v and no more than a call's end past it", m.wall, length)
		}
	})

	t.Run("one call sticks", func(t *testing.T) {
		m := run(t, func(time.Time) worker {
			return func(ctx context.Context, g, i int) error {
				if g == 0 && i == 100 {
					time.Sleep(3 * time.Second)
				}
				time.Sleep(call)
				return nil
			}
		})
		if m.wall < length+2*time.Second {
			t.Errorf("wall %v, want past %v: one call stuck for 3s", m.wall, length+2*time.Second)
		}
		if m.slowest < 2500 {
			t.Errorf("slowest window %.0f q/s, want the three other workers' ~3000", m.slowest)
		}
		if m.qps > 2000 {
			t.Errorf("%.0f q/s, want the stuck call's wait to weigh on the round's q/s", m.qps)
		}
	})
}

// A window's rate is taken at its real length, whatever a late tick made
// it; a slice shorter than half a window is added to the next rather than
// read as a window of its own; and a round with no window says so.
func TestPaceSlowestWindow(t *testing.T) {
	t0 := time.Unix(0, 0)
	at := func(d time.Duration) time.Time { return t0.Add(d) }

	p := startPace(t0)
	if _, ok := p.slowestRate(); ok {
		t.Error("a pace with no sample has a slowest window")
	}
	p.sample(at(100*time.Millisecond), 100)  // 1000/s
	p.sample(at(300*time.Millisecond), 240)  // a late tick: 140 in 200ms, 700/s
	p.sample(at(301*time.Millisecond), 240)  // too short to count
	p.sample(at(400*time.Millisecond), 340)  // 100 in 100ms since 300ms
	p.sample(at(500*time.Millisecond), 1340) // 10000/s
	rate, ok := p.slowestRate()
	if !ok || rate != 700 {
		t.Errorf("slowest window %v (%v), want 700/s", rate, ok)
	}

	short := startPace(t0)
	short.sample(at(40*time.Millisecond), 30)
	if _, ok := short.slowestRate(); ok {
		t.Error("a round shorter than half a window has a slowest window")
	}
}

// The round line carries the round's real length and its slowest
// window, and a dash where the round held no window.
func TestRoundLineShowsLengthAndSlowestWindow(t *testing.T) {
	m := measured{qps: 21557, cpuQuery: 24700 * time.Nanosecond, userQuery: 9800 * time.Nanosecond, wall: 31250 * time.Millisecond, slowest: 18230}
	line := roundLine("SELECT 1", "pipelined-8", 32, 3, m)
	for _, want := range []string{"SELECT 1  pipelined-8    32 workers round 3:    21557 q/s", " 31.25 s wall, slowest 100ms    18230 q/s"} {
		if !strings.Contains(line, want) {
			t.Errorf("round line lacks %q:\n%s", want, line)
		}
	}
	m.slowest = -1
	if line := roundLine("SELECT 1", "pipelined-8", 32, 3, m); !strings.HasSuffix(line, "slowest 100ms        – q/s") {
		t.Errorf("a round with no window:\n%s", line)
	}
}
