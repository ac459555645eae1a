package shoal

import (
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal/internal/fairshare"
)

// A pool that waits takes the share of a peer that holds its one
// connection leased, past the grace, and keeps it until the peer releases
// the connection, which then closes for the waiting pool to dial: the
// peer, which waits for nothing, does not take the share back a grace
// later, and the waiting pool is served at the release, whenever it
// comes.
func TestLocalBudgetShareTakenFromALeaseStaysTaken(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b, a, c := peersUnderBudget(t, 1)
		l := mustAcquire(t, a)
		defer l.Release() // a second Release does nothing
		hc := hold(c, 1)
		defer hc.stop()
		time.Sleep(fairshare.Grace(b.idle, localSampleEvery) + 4*localSampleEvery)
		for range 40 {
			synctest.Wait()
			if got := sharesOf(b); got != "a 0/1, c 1/0" {
				t.Fatalf("c waiting, a's one connection leased: %s, want a 0/1, c 1/0 from the grace on", got)
			}
			time.Sleep(localSampleEvery)
		}
		l.Release()
		synctest.Wait()
		if got := hc.got.Load(); got != 1 {
			t.Fatalf("c served %d once a released its connection (%s)", got, sharesOf(b))
		}
	})
}
