package shoal

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
	"time"
)

// TestLocalBudgetMinFollowsSetMaxConns guards a LocalBudget's minimum for a
// pool that SetMaxConns shrank below its MinConns: the part it can no
// longer use goes to the other pools, and comes back as it grows.
func TestLocalBudgetMinFollowsSetMaxConns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustBudget(t, 6, BudgetIdleTime(time.Second))
		da, db := &fakeDialer{}, &fakeDialer{}
		a, _ := newTestPool(t, Config[*fakeConn]{Name: "a", MaxConns: 5, MinConns: 5, Budget: b, Dial: da.dial, Close: da.close})
		bb, _ := newTestPool(t, Config[*fakeConn]{Name: "b", MaxConns: 6, Budget: b, Dial: db.dial, Close: db.close})
		if err := a.SetMaxConns(1); err != nil {
			t.Fatal(err)
		}
		h := hold(bb, 6)
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if s := bb.Stats(); s.TotalConns != 5 {
			h.stop()
			t.Fatalf("pool a capped at 1 by SetMaxConns keeps MinConns 5 of a budget of 6: b with 6 callers waiting holds %d (%s); a holds %d", s.TotalConns, sharesOf(b), a.Stats().TotalConns)
		}
		// Grown back, a gets its minimum again as b's callers let go.
		if err := a.SetMaxConns(5); err != nil {
			t.Fatal(err)
		}
		h.stop()
		time.Sleep(10 * time.Second)
		synctest.Wait()
		if got := sharesOf(b); got != "a 5/5, b 1/1" {
			t.Fatalf("shares/held after a grew back: %s, want a 5/5, b 1/1", got)
		}
	})
}

// A pool that SetMaxConns shrank below its MinConns keeps its place in the
// sum of minimums: a pool joining meanwhile is refused a minimum that
// would not fit once the first grows back, rather than let in to find the
// minimums above the size then.
func TestLocalBudgetShrunkPoolKeepsItsPlaceInTheMinimums(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustBudget(t, 6)
		a, _ := newTestPool(t, Config[*fakeConn]{Name: "a", MaxConns: 5, MinConns: 5, Budget: b})
		if err := a.SetMaxConns(1); err != nil {
			t.Fatal(err)
		}
		// Past a few samples, which read the shrunk minimum.
		time.Sleep(time.Second)
		synctest.Wait()
		d := &fakeDialer{}
		p, err := New(Config[*fakeConn]{Name: "c", MaxConns: 3, MinConns: 2, Budget: b, Dial: d.dial, Close: d.close})
		if err == nil {
			_ = p.Close(context.Background())
		}
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != "Budget" || !strings.Contains(err.Error(), "sum to 7") {
			t.Fatalf("New with MinConns 2 beside a pool of MinConns 5 shrunk to MaxConns 1, under a budget of 6: %v, want a ConfigError: the minimums would sum to 7", err)
		}
		// A minimum that fits beside a's whole one joins.
		newTestPool(t, Config[*fakeConn]{Name: "d", MaxConns: 3, MinConns: 1, Budget: b})
	})
}
