package shoal

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal/internal/fairshare"
)

// While a pool waits beyond what the shares give it, a peer's idle
// connections above the peer's need move to it at once, and the peer's
// connection in use, within its fair share, stays.
func TestLocalBudgetWaitingPoolTakesIdleConnectionsFirst(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, a, c := peersUnderBudget(t, 4, BudgetIdleTime(time.Second))
		ha, burst := hold(a, 1), hold(a, 1)
		time.Sleep(100 * time.Millisecond)
		synctest.Wait()
		burst.stop() // a keeps one connection busy and one idle
		time.Sleep(3 * time.Second)
		synctest.Wait()
		if s := a.Stats(); s.IdleConns != 1 || s.Leases != 1 {
			t.Fatalf("a: %+v, want 1 idle and 1 leased (%s)", s, sharesOf(b))
		}
		hc := hold(c, 4)
		time.Sleep(60 * time.Millisecond)
		synctest.Wait()
		if got := sharesOf(b); got != "a 1/1, c 3/3" || hc.got.Load() != 3 {
			t.Fatalf("c waiting for 4: %s, c served %d; want a's idle connection moved at once: a 1/1, c 3/3", got, hc.got.Load())
		}
		if s := a.Stats(); s.Leases != 1 || s.TotalConns != 1 {
			t.Fatalf("a: %+v, want its connection in use kept", s)
		}
		time.Sleep(time.Second)
		synctest.Wait()
		if got := sharesOf(b); got != "a 1/1, c 3/3" {
			t.Fatalf("a second later: %s, want a's one busy connection (its fair share) kept", got)
		}
		hc.stop()
		ha.stop()
	})
}

// A pool that waits while every connection is in use waits the budget's
// grace for one to come free rather than force one closed; past it, it
// takes one, closed as its holder releases it; and it is then served.
func TestLocalBudgetBusyConnectionsMoveOnlyAfterTheGrace(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, a, c := peersUnderBudget(t, 2, BudgetIdleTime(time.Second))
		ha1, ha2 := hold(a, 1), hold(a, 1)
		time.Sleep(2 * time.Second)
		synctest.Wait()
		hc := hold(c, 1)
		time.Sleep(fairshare.Grace(b.idle, localSampleEvery) - 10*time.Millisecond)
		synctest.Wait()
		if got := sharesOf(b); got != "a 2/2, c 0/0" {
			t.Fatalf("within the grace: %s, want a's busy connections kept: a 2/2, c 0/0", got)
		}
		time.Sleep(2 * localSampleEvery)
		synctest.Wait()
		if got := sharesOf(b); got != "a 1/2, c 1/0" {
			t.Fatalf("past the grace: %s, want a 1/2, c 1/0 (a closes one as it is released)", got)
		}
		ha2.stop()
		synctest.Wait()
		if got := hc.got.Load(); got != 1 {
			t.Fatalf("c served %d after a released a connection above its share (%s)", got, sharesOf(b))
		}
		if s := a.Stats(); s.TotalConns != 1 {
			t.Fatalf("a: %+v, want the released connection closed", s)
		}
		hc.stop()
		ha1.stop()
	})
}
