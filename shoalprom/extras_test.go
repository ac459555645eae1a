package shoalprom_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/poolmetrics/metricstest"
	"github.com/shoalpool/shoal/shoalprom"
)

func TestExtras(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c := newCollector(t, shoalprom.Options{})
	reg.MustRegister(c)
	m, err := c.Pool("p")
	if err != nil {
		t.Fatal(err)
	}
	stats := metricstest.RunExtras(t, m)
	if stats.DialErrors != 1 || stats.Dials != 3 || stats.RejectedAcquires != 1 || stats.Closed != 2 {
		t.Fatalf("Stats disagree with the scenario: %+v", stats)
	}
	want := map[string]float64{
		"shoal_pool_dial_errors_total{pool_name=p}":                   1,
		"shoal_pool_rejections_total{pool_name=p}":                    1,
		"shoal_pool_closes_total{pool_name=p,reason=discarded}":       1,
		"shoal_pool_closes_total{pool_name=p,reason=pool_closed}":     1,
		"db_client_connection_timeouts_total{pool_name=p}":            0,
		"shoal_pool_leaks_total{pool_name=p}":                         0,
		"db_client_connection_create_time_seconds_count{pool_name=p}": 2,
		"db_client_connection_wait_time_seconds_count{pool_name=p}":   2,
		"db_client_connection_use_time_seconds_count{pool_name=p}":    2,
	}
	fam, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fam {
		for _, mm := range f.GetMetric() {
			key := "{" + labelsOf(mm) + "}"
			if h := mm.GetHistogram(); h != nil {
				got[f.GetName()+"_count"+key] = float64(h.GetSampleCount())
				continue
			}
			got[f.GetName()+key] = value(mm)
		}
	}
	for k, w := range want {
		if g, ok := got[k]; !ok || g != w {
			t.Errorf("%s = %v (present %v), want %v", k, g, ok, w)
		}
	}
	var closes float64
	for k, v := range got {
		if strings.HasPrefix(k, "shoal_pool_closes_total{") {
			closes += v
		}
	}
	if closes != float64(stats.Closed) {
		t.Errorf("closes summed over reasons = %v, want Stats.Closed = %d", closes, stats.Closed)
	}
}

// TestMultiplexed: with several leases per connection, used counts
// connections and shoal_pool_leases counts leases.
func TestMultiplexed(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c := newCollector(t, shoalprom.Options{})
	reg.MustRegister(c)
	m, err := c.Pool("h2")
	if err != nil {
		t.Fatal(err)
	}
	metricstest.HoldStreams(t, m, 3)
	fam, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]float64{}
	for _, f := range fam {
		if f.GetType() == dto.MetricType_GAUGE {
			for _, mm := range f.GetMetric() {
				got[f.GetName()+"{"+labelsOf(mm)+"}"] = value(mm)
			}
		}
	}
	want := map[string]float64{
		"db_client_connection_count{pool_name=h2,state=used}": 1,
		"db_client_connection_count{pool_name=h2,state=idle}": 0,
		"shoal_pool_leases{pool_name=h2}":                     3,
	}
	for k, w := range want {
		if got[k] != w {
			t.Errorf("%s = %v, want %v", k, got[k], w)
		}
	}
}

// bargeMisses gathers shoal_pool_barge_misses_total, by labels, failing
// when it is missing or not a counter.
func bargeMisses(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	fam, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range fam {
		if f.GetName() != "shoal_pool_barge_misses_total" {
			continue
		}
		if f.GetType() != dto.MetricType_COUNTER {
			t.Fatalf("shoal_pool_barge_misses_total has type %s, want counter", f.GetType())
		}
		if !strings.Contains(f.GetHelp(), "Config.BargeWindow") {
			t.Errorf("shoal_pool_barge_misses_total help %q does not say it needs Config.BargeWindow", f.GetHelp())
		}
		got := map[string]float64{}
		for _, m := range f.GetMetric() {
			got[labelsOf(m)] = value(m)
		}
		return got
	}
	t.Fatal("shoal_pool_barge_misses_total missing from the scrape")
	return nil
}

// TestBargeMisses: shoal_pool_barge_misses_total is Stats.BargeMisses,
// read at scrape time: 1 for a barging pool whose released connection
// went unclaimed while someone waited, 0 for a strict pool taken through
// the same events and for a pool not attached; a closed pool's count
// stays.
func TestBargeMisses(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c := newCollector(t, shoalprom.Options{})
	reg.MustRegister(c)
	pool := func(name string) *shoalprom.PoolMetrics {
		m, err := c.Pool(name)
		if err != nil {
			t.Fatal(err)
		}
		return m
	}
	barging := metricstest.HandOffOnce(t, pool("barging"), time.Hour)
	strict := metricstest.HandOffOnce(t, pool("strict"), 0)
	pool("unattached")
	want := map[string]float64{"pool_name=barging": 1, "pool_name=strict": 0, "pool_name=unattached": 0}
	if got := bargeMisses(t, reg); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("open pools: shoal_pool_barge_misses_total = %v, want %v", got, want)
	}
	for _, p := range []*shoal.Pool[*fakeConn]{barging, strict} {
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	if got := bargeMisses(t, reg); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("closed pools: shoal_pool_barge_misses_total = %v, want %v", got, want)
	}
}
