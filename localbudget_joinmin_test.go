package shoal

import (
	"testing"
	"testing/synctest"
	"time"
)

// A pool that joins while a peer holds every connection in use, above the
// peer's minimum, gets its own minimum at once, as Join promises, not a
// grace later: minimums are granted first, whatever the others want. The
// peer closes the connection above its share as it is released, and the
// newcomer's caller is served then.
func TestLocalBudgetJoinGrantsTheMinimumAtOnce(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustBudget(t, 2, BudgetIdleTime(8*time.Second)) // a grace of a second
		a, _ := newTestPool(t, Config[*fakeConn]{Name: "a", MaxConns: 2, MinConns: 1, Budget: b})
		ha1, ha2 := hold(a, 1), hold(a, 1)
		defer func() {
			if ha2 != nil {
				ha2.stop()
			}
			ha1.stop()
		}()
		time.Sleep(time.Second)
		synctest.Wait()
		if got := sharesOf(b); got != "a 2/2" {
			t.Fatalf("a bursting alone: %s, want a 2/2", got)
		}
		c, _ := newTestPool(t, Config[*fakeConn]{Name: "c", MaxConns: 2, MinConns: 1, Budget: b})
		hc := hold(c, 1)
		defer hc.stop()
		synctest.Wait()
		if got := sharesOf(b); got != "a 1/2, c 1/0" {
			t.Fatalf("c joined with MinConns 1: %s, want a 1/2, c 1/0 (c's minimum first)", got)
		}
		time.Sleep(3 * localSampleEvery)
		synctest.Wait()
		if got := sharesOf(b); got != "a 1/2, c 1/0" {
			t.Fatalf("samples later: %s, want a 1/2, c 1/0 (c's minimum kept)", got)
		}
		ha2.stop()
		ha2 = nil
		synctest.Wait()
		if got := hc.got.Load(); got != 1 {
			t.Fatalf("c served %d once a released a connection above its share (%s)", got, sharesOf(b))
		}
	})
}
