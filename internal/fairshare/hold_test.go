package fairshare

import (
	"fmt"
	"testing"
	"time"
)

// A pool that holds its whole demand (one lease, no caller waiting) gives
// its share to a pool that waits, past the grace, and does not take it
// back a grace later: it waits for nothing, and its connection closes as
// it is released, for the waiting pool to dial. Taking the share back
// every grace sent the two pools' shares round and round, and the waiting
// pool got the connection only if its holder let go during its turn.
func TestPoolHoldingItsDemandDoesNotTakeTheShareBack(t *testing.T) {
	window, every := 2*time.Second, 50*time.Millisecond
	holder, waiter := &Pool{Smooth: Smoother{Window: window}}, &Pool{Smooth: Smoother{Window: window}}
	t0 := time.Unix(1000, 0)
	var shares []int
	got := -1 // the sample at which the waiter got the share
	for i := range 120 {
		at := t0.Add(time.Duration(i) * every)
		holder.Sample(at, 1, 1, every)
		waiter.Sample(at, 0, 1, every)
		holder.Held, waiter.Held = 1, 0
		DividePools(1, []*Pool{holder, waiter}, at, window, every)
		shares = append(shares, waiter.Share)
		if waiter.Share == 1 && got < 0 {
			got = i
		}
		if got >= 0 && waiter.Share != 1 {
			t.Fatalf("the waiting pool's share, every %v: %v; want it kept once given (at sample %d)", every, fmt.Sprint(shares), got)
		}
	}
	if got < 0 || time.Duration(got)*every > Grace(window, every)+every {
		t.Fatalf("the waiting pool's share, every %v: %v; want 1 within the grace", every, shares)
	}
}
