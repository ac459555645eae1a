package shoalprom_test

import (
	"context"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/poolmetrics/metricstest"
	"github.com/shoalpool/shoal/shoalprom"
)

// TestNewRefusedClaimsNoName guards metrics made with Pool("") for a pool
// that shoal.New refuses: no series of the pool that never was, and its
// name stays free for the pool made next.
func TestNewRefusedClaimsNoName(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c := newCollector(t, shoalprom.Options{})
	reg.MustRegister(c)
	budget, err := shoal.NewBudget(1)
	if err != nil {
		t.Fatal(err)
	}
	first, err := shoal.New(shoal.Config[*metricstest.FakeConn]{Name: "first", Dial: metricstest.FakeDial(), MaxConns: 1, MinConns: 1, Budget: budget})
	if err != nil {
		t.Fatal(err)
	}
	defer first.Close(context.Background())

	refused, err := c.Pool("")
	if err != nil {
		t.Fatal(err)
	}
	// The budget's one connection is the first pool's minimum already.
	cfg := shoal.Config[*metricstest.FakeConn]{Name: "orders", Dial: metricstest.FakeDial(), MaxConns: 1, MinConns: 1, Budget: budget, Observer: refused}
	if _, err := shoal.New(cfg); err == nil {
		t.Fatal("New accepted a pool its budget cannot hold")
	}
	for name, family := range newScraper(t, reg).scrape() {
		for _, m := range family.GetMetric() {
			if strings.Contains(labelsOf(m), "pool_name=orders") {
				t.Errorf("after New refused the pool: %s{%s}, want no series of it", name, labelsOf(m))
			}
		}
	}

	metrics, err := c.Pool("")
	if err != nil {
		t.Fatal(err)
	}
	cfg.MinConns, cfg.Budget, cfg.Observer = 0, nil, metrics
	pool, err := shoal.New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close(context.Background())
	if got := metrics.Name(); got != "orders" {
		t.Errorf("the pool made after the refused one is reported as %q, want %q", got, "orders")
	}
}
