package shoalprom_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalprom"
)

// TestBudgetGauges: a pool with a Budget reports its share, demand and the
// budget's members; a pool without one reports none of them.
func TestBudgetGauges(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c := newCollector(t, shoalprom.Options{})
	reg.MustRegister(c)
	budgeted, err := c.Pool("orders")
	if err != nil {
		t.Fatal(err)
	}
	budgeted.Attach(func() shoal.Stats {
		return shoal.Stats{MaxConns: 32, Share: 10, Demand: 14, BudgetMembers: 4}
	})
	plain, err := c.Pool("plain")
	if err != nil {
		t.Fatal(err)
	}
	plain.Attach(func() shoal.Stats { return shoal.Stats{MaxConns: 8, Share: 8, Demand: 2} })

	fam, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fam {
		if f.GetType() != dto.MetricType_GAUGE {
			continue
		}
		for _, m := range f.GetMetric() {
			got[f.GetName()+"{"+labelsOf(m)+"}"] = value(m)
		}
	}
	for k, want := range map[string]float64{
		"shoal_pool_budget_share{pool_name=orders}":   10,
		"shoal_pool_budget_demand{pool_name=orders}":  14,
		"shoal_pool_budget_members{pool_name=orders}": 4,
	} {
		if v, ok := got[k]; !ok || v != want {
			t.Errorf("%s = %v (reported %v), want %v", k, v, ok, want)
		}
	}
	for _, k := range []string{"shoal_pool_budget_share{pool_name=plain}", "shoal_pool_budget_demand{pool_name=plain}", "shoal_pool_budget_members{pool_name=plain}"} {
		if _, ok := got[k]; ok {
			t.Errorf("%s reported for a pool without a Budget", k)
		}
	}
}
