package shoalotel_test

import (
	"fmt"
	"testing"

	"github.com/shoalpool/shoal"
)

// TestBudgetInstruments: a pool with a Budget reports its share, demand and
// the budget's members; a pool without one reports none of them.
func TestBudgetInstruments(t *testing.T) {
	m, reader := newMetrics(t)
	budgeted, err := m.Pool("orders")
	if err != nil {
		t.Fatal(err)
	}
	budgeted.Attach(func() shoal.Stats {
		return shoal.Stats{MaxConns: 32, Share: 10, Demand: 14, BudgetMembers: 4}
	})
	plain, err := m.Pool("plain")
	if err != nil {
		t.Fatal(err)
	}
	plain.Attach(func() shoal.Stats { return shoal.Stats{MaxConns: 8, Share: 8, Demand: 2} })
	c := collect(t, reader)
	const orders = "db.client.connection.pool.name=orders"
	for name, want := range map[string]map[string]int64{
		"shoal.pool.budget.share":   {orders: 10},
		"shoal.pool.budget.demand":  {orders: 14},
		"shoal.pool.budget.members": {orders: 4},
	} {
		if got := c.sum(t, name, c[name].Unit, false); fmt.Sprint(got) != fmt.Sprint(want) {
			t.Errorf("%s = %v, want %v (the pool without a Budget reports none)", name, got, want)
		}
	}
}
