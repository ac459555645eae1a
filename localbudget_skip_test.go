package shoal

import (
	"testing"
	"testing/synctest"
	"time"
)

// A LocalBudget skips the division at a sample whose inputs are the last
// division's; a sample after any of them changed still divides. Here,
// among idle pools: a minimum that SetMaxConns lowered, and the tie order
// going round, which moves the connection that does not divide evenly.
func TestLocalBudgetDividesWhenAnInputChanges(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustBudget(t, 4, BudgetIdleTime(time.Second))
		a, _ := newTestPool(t, Config[*fakeConn]{Name: "a", MaxConns: 4, MinConns: 3, Budget: b})
		newTestPool(t, Config[*fakeConn]{Name: "c", MaxConns: 4, Budget: b})
		time.Sleep(10 * localSampleEvery) // samples alike, divisions skipped
		synctest.Wait()
		if got := sharesOf(b); got != "a 3/3, c 1/0" {
			t.Fatalf("idle with a's MinConns 3: %s, want a 3/3, c 1/0", got)
		}
		if err := a.SetMaxConns(1); err != nil { // a's minimum is now 1
			t.Fatal(err)
		}
		time.Sleep(localSampleEvery)
		synctest.Wait()
		if got := sharesOf(b); got != "a 2/1, c 2/0" {
			t.Fatalf("one sample after a's minimum fell to 1: %s, want a 2/1, c 2/0", got)
		}

		// A third pool: four connections among a (MinConns 1 now), c and
		// e divide as 1 each and one over, which goes round every
		// IdleTime (a second) while nothing else changes.
		newTestPool(t, Config[*fakeConn]{Name: "e", MaxConns: 4, Budget: b})
		synctest.Wait()
		first := sharesOf(b)
		seen := map[string]bool{first: true}
		for range 3 {
			time.Sleep(time.Second)
			synctest.Wait()
			seen[sharesOf(b)] = true
		}
		if len(seen) < 2 {
			t.Fatalf("idle pools over 3s with ties going round every second: shares stayed %s", first)
		}
	})
}
