package shoal

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal/internal/fairshare"
)

// An acquire that times out because the pool's Budget holds it back says
// so, naming the budget: "for one of 0 connections" on a pool of
// MaxConns 4, or "1 dialing" for a dial that never reached the server,
// would send its reader to the server instead.
func TestAcquireErrorNamesTheBudgetThatHeldThePoolBack(t *testing.T) {
	acquireErr := func(t *testing.T, p *Pool[*fakeConn], wait time.Duration) *AcquireError {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), wait)
		defer cancel()
		_, err := p.Acquire(ctx)
		var ae *AcquireError
		if !errors.As(err, &ae) || !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire of a pool held back by its budget: %v, want an *AcquireError wrapping the deadline", err)
		}
		return ae
	}
	t.Run("a dial waits for a permit", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := mustBudget(t, 1, BudgetName("tenants"))
			a, _ := newTestPool(t, Config[*fakeConn]{Name: "a", MaxConns: 4, Budget: b})
			c, _ := newTestPool(t, Config[*fakeConn]{Name: "c", MaxConns: 4, Budget: b})
			l := mustAcquire(t, a) // the budget's one connection
			defer l.Release()
			// c, whose caller waits, takes the share once it has waited
			// the grace (Rebalance), a grace after the first sample to
			// see its caller wait: the sample at the start or the next,
			// as the goroutines happen to run. a, which holds its one
			// lease and waits for nothing, does not take it back. Half a
			// grace past the first, c holds the share whichever sample
			// it was. a's connection, leased, keeps the permit all along.
			grace := fairshare.Grace(b.idle, localSampleEvery)
			ae := acquireErr(t, c, grace+grace/2)
			if ae.Budget != "tenants" || ae.Share != 1 || ae.PermitWaits != 1 {
				t.Errorf("Budget %q, Share %d, PermitWaits %d; want \"tenants\", 1, 1", ae.Budget, ae.Share, ae.PermitWaits)
			}
			if msg := ae.Error(); !strings.Contains(msg, `; budget "tenants" lets the pool hold 1 now, and 1 dial waits for its permit`) {
				t.Errorf("the error does not say the budget held the dial back: %s", msg)
			}
		})
	})
	t.Run("the share is 0", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := mustBudget(t, 1, BudgetName("tenants"))
			newTestPool(t, Config[*fakeConn]{Name: "a", MaxConns: 4, MinConns: 1, Budget: b})
			c, _ := newTestPool(t, Config[*fakeConn]{Name: "c", MaxConns: 4, Budget: b})
			ae := acquireErr(t, c, 300*time.Millisecond)
			if ae.Budget != "tenants" || ae.Share != 0 || ae.PermitWaits != 0 {
				t.Errorf("Budget %q, Share %d, PermitWaits %d; want \"tenants\", 0, 0", ae.Budget, ae.Share, ae.PermitWaits)
			}
			if msg := ae.Error(); !strings.Contains(msg, `; budget "tenants" lets the pool hold 0 now`) || strings.Contains(msg, "permit") {
				t.Errorf("the error does not say the budget held the pool back: %s", msg)
			}
		})
	})
	t.Run("no budget, or one that holds nothing back", func(t *testing.T) {
		synctest.Test(t, func(t *testing.T) {
			b := mustBudget(t, 8, BudgetName("tenants"))
			p, _ := newTestPool(t, Config[*fakeConn]{Name: "p", MaxConns: 1, Budget: b})
			l := mustAcquire(t, p)
			defer l.Release()
			if ae := acquireErr(t, p, 300*time.Millisecond); ae.Budget != "" || strings.Contains(ae.Error(), "budget") {
				t.Errorf("a pool held back by its own MaxConns blames its budget: %s", ae.Error())
			}
		})
	})
}
