package shoal

import (
	"context"
	"errors"
	"strings"
	"testing"
	"testing/synctest"
)

// A pool whose own minimum is above the budget's size is refused, as one
// whose minimum brings the sum above it is: cut to the size in silence, it
// took the whole budget, and the next pool with any minimum was refused
// instead, blamed for a sum it had no part in.
func TestLocalBudgetRefusesAMinimumAboveItsSize(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustBudget(t, 3, BudgetName("tenants"))
		d := &fakeDialer{}
		p, err := New(Config[*fakeConn]{Name: "big", MaxConns: 10, MinConns: 5, Budget: b, Dial: d.dial})
		if err == nil {
			_ = p.Close(context.Background())
		}
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != "Budget" || !strings.Contains(err.Error(), `"tenants"`) || !strings.Contains(err.Error(), "sum to 5") {
			t.Fatalf("New with MinConns 5 under a budget of 3: %v, want a ConfigError naming the budget and the sum of 5", err)
		}
		if n := b.Members(); n != 0 {
			t.Fatalf("the refused pool counts as a member: %d", n)
		}
		// The budget is whole for the pools that fit.
		newTestPool(t, Config[*fakeConn]{Name: "a", MaxConns: 3, MinConns: 2, Budget: b})
		newTestPool(t, Config[*fakeConn]{Name: "c", MaxConns: 3, MinConns: 1, Budget: b})
	})
}
