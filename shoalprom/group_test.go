package shoalprom_test

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalprom"
)

// The pattern docs/budgets.md gives for metrics per key of a shoal.Group:
// one PoolMetrics per key, handed to each pool the key gets. Every pool of
// the group reports its part of the budget under its key; a pool closed
// for idleness takes its gauges with it; and the key's next pool carries
// its counters on from where the last one left them.
func TestGroupMetricsPerKey(t *testing.T) {
	c := newCollector(t, shoalprom.Options{})
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(c)
	s := newScraper(t, reg)

	var mu sync.Mutex
	perKey := map[string]*shoalprom.PoolMetrics{}
	metricsFor := func(key string) (*shoalprom.PoolMetrics, error) {
		mu.Lock()
		defer mu.Unlock()
		if m, ok := perKey[key]; ok {
			return m, nil
		}
		m, err := c.Pool(key)
		if err != nil {
			return nil, err
		}
		perKey[key] = m
		return m, nil
	}
	budget, err := shoal.NewBudget(4, shoal.BudgetName("tenants"))
	if err != nil {
		t.Fatal(err)
	}
	const idle = 100 * time.Millisecond
	g, err := shoal.NewGroup(shoal.GroupConfig[string, int]{
		Name:   "tenants",
		Budget: budget,
		Config: func(tenant string) (shoal.Config[int], error) {
			m, err := metricsFor(tenant)
			if err != nil {
				return shoal.Config[int]{}, err
			}
			return shoal.Config[int]{
				Name:     tenant,
				MaxConns: 2,
				Observer: m,
				Dial:     func(context.Context) (int, error) { return 1, nil },
			}, nil
		},
		IdleTimeout: idle,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	use := func(tenant string) {
		t.Helper()
		if err := g.Do(ctx, tenant, func(int) error { return nil }); err != nil {
			t.Fatalf("%s: %v", tenant, err)
		}
	}
	acquires := func(f map[string]*dto.MetricFamily, tenant string) uint64 {
		t.Helper()
		m, ok := series(t, f, "db_client_connection_wait_time_seconds", dto.MetricType_HISTOGRAM)["pool_name="+tenant]
		if !ok {
			t.Fatalf("no acquire wait series for %s", tenant)
		}
		return m.GetHistogram().GetSampleCount()
	}
	gauge := func(f map[string]*dto.MetricFamily, name, tenant string) (float64, bool) {
		fam, ok := f[name]
		if !ok {
			return 0, false
		}
		for _, m := range fam.GetMetric() {
			if labelsOf(m) == "pool_name="+tenant {
				return value(m), true
			}
		}
		return 0, false
	}

	use("acme")
	use("globex")
	use("acme")
	f := s.scrape()
	for _, tenant := range []string{"acme", "globex"} {
		if n, ok := gauge(f, "shoal_pool_budget_members", tenant); !ok || n != 2 {
			t.Fatalf("%s: shoal_pool_budget_members %v (present %v), want 2", tenant, n, ok)
		}
		if share, ok := gauge(f, "shoal_pool_budget_share", tenant); !ok || share < 1 {
			t.Fatalf("%s: shoal_pool_budget_share %v (present %v), want at least 1", tenant, share, ok)
		}
	}
	if n := acquires(f, "acme"); n != 2 {
		t.Fatalf("acme: %d acquires counted, want 2", n)
	}

	// Both pools close for idleness: their gauges go, their counters stay.
	deadline := time.Now().Add(10 * time.Second)
	for g.Len() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("%d pools still open long after IdleTimeout %s", g.Len(), idle)
		}
		time.Sleep(20 * time.Millisecond)
	}
	f = s.scrape()
	if share, ok := gauge(f, "shoal_pool_budget_share", "acme"); ok {
		t.Fatalf("acme's pool is closed, yet its share is reported: %v", share)
	}
	if n := acquires(f, "acme"); n != 2 {
		t.Fatalf("acme after its pool closed: %d acquires counted, want 2", n)
	}

	// acme's next pool goes on from there, alone in the budget now.
	use("acme")
	f = s.scrape()
	if n := acquires(f, "acme"); n != 3 {
		t.Fatalf("acme's second pool: %d acquires counted, want 3 (the first pool's 2 and its 1)", n)
	}
	if n, ok := gauge(f, "shoal_pool_budget_members", "acme"); !ok || n != 1 {
		t.Fatalf("acme's second pool: shoal_pool_budget_members %v (present %v), want 1", n, ok)
	}
}
