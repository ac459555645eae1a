package fairshare

import (
	"testing"
	"time"
)

// A pool's need follows the connections it keeps busy, doubled while
// callers wait beyond them, not the callers waiting: a pool with none and
// a crowd waiting needs none on average.
func TestNeed(t *testing.T) {
	window, every := time.Second, 50*time.Millisecond
	run := func(busy, demand, samples int) int {
		var n Need
		for range samples {
			n.Add(busy, demand, window, every)
		}
		return n.Value()
	}
	if got := run(3, 3, 200); got != 3 {
		t.Fatalf("3 busy, nobody waiting: need %d, want 3", got)
	}
	if got := run(3, 16, 200); got != 6 {
		t.Fatalf("3 busy, 13 waiting: need %d, want 6", got)
	}
	if got := run(0, 16, 200); got != 0 {
		t.Fatalf("none busy, 16 waiting: need %d, want 0", got)
	}
	// Over one window a step is most of the way there, not all of it.
	if got := run(4, 4, int(window/every)); got < 2 || got > 3 {
		t.Fatalf("a window after a step to 4: need %d, want 2 or 3", got)
	}
	var z Need
	z.Add(5, 5, 0, every)
	if got := z.Value(); got != 5 {
		t.Fatalf("zero window: need %d, want 5", got)
	}
}
