package shoalprom_test

import (
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
	"sort"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/promhttp"
	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/poolmetrics/metricstest"
	"github.com/shoalpool/shoal/shoalprom"
)

// scraper serves a registry over HTTP on loopback and scrapes it as
// Prometheus would.
type scraper struct {
	t      *testing.T
	srv    *httptest.Server
	client *http.Client
}

func newScraper(t *testing.T, reg *prometheus.Registry) *scraper {
	srv := httptest.NewServer(promhttp.HandlerFor(reg, promhttp.HandlerOpts{ErrorHandling: promhttp.HTTPErrorOnError}))
	client := &http.Client{Transport: &http.Transport{DisableKeepAlives: true}}
	t.Cleanup(srv.Close)
	return &scraper{t: t, srv: srv, client: client}
}

// scrape returns the metric families, by name.
func (s *scraper) scrape() map[string]*dto.MetricFamily {
	s.t.Helper()
	if u, _ := url.Parse(s.srv.URL); u.Hostname() != "127.0.0.1" {
		s.t.Fatalf("test server on %s, want loopback 127.0.0.1", u.Hostname())
	}
	resp, err := s.client.Get(s.srv.URL + "/metrics")
	if err != nil {
		s.t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		s.t.Fatalf("scrape: %s", resp.Status)
	}
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		s.t.Fatalf("parse scrape: %v", err)
	}
	return families
}

// labelsOf renders a metric's labels as "k=v,k=v", sorted.
func labelsOf(m *dto.Metric) string {
	var parts []string
	for _, l := range m.GetLabel() {
		parts = append(parts, l.GetName()+"="+l.GetValue())
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// series returns the family's metrics keyed by labelsOf, failing when the
// family is missing or has another type.
func series(t *testing.T, families map[string]*dto.MetricFamily, name string, typ dto.MetricType) map[string]*dto.Metric {
	t.Helper()
	f, ok := families[name]
	if !ok {
		t.Fatalf("metric %s missing from the scrape", name)
	}
	if f.GetType() != typ {
		t.Fatalf("metric %s has type %s, want %s", name, f.GetType(), typ)
	}
	out := make(map[string]*dto.Metric)
	for _, m := range f.GetMetric() {
		out[labelsOf(m)] = m
	}
	return out
}

// value returns a gauge's or counter's value.
func value(m *dto.Metric) float64 {
	if m.GetCounter() != nil {
		return m.GetCounter().GetValue()
	}
	return m.GetGauge().GetValue()
}

func TestScrapeKnownSequence(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	collector := newCollector(t, shoalprom.Options{})
	reg.MustRegister(collector)
	s := newScraper(t, reg)

	metrics, err := collector.Pool("orders-db")
	if err != nil {
		t.Fatal(err)
	}
	// A second pool, registered but never used nor attached: its counters
	// are reported at zero, it has no gauges, and nothing of orders-db
	// leaks into its series.
	if _, err := collector.Pool("idle-pool"); err != nil {
		t.Fatal(err)
	}

	leakCount := func() float64 {
		f := s.scrape()["shoal_pool_leaks_total"]
		for _, m := range f.GetMetric() {
			if labelsOf(m) == "pool_name=orders-db" {
				return value(m)
			}
		}
		return -1
	}
	pool, cleanup := metricstest.RunSequence(t, metrics, func() bool { return leakCount() == 1 })
	defer cleanup()

	stats := pool.Stats()
	fam := s.scrape()
	const orders, other = "pool_name=orders-db", "pool_name=idle-pool"

	// Gauges, read from Stats at scrape time; the pool is quiet now.
	if stats.IdleConns != 1 || stats.InUseConns != 1 || stats.Waiting != 0 || stats.Leases != 1 || stats.Dialing != 0 {
		t.Fatalf("pool after the sequence: %+v, want 1 idle, 1 in use, 1 lease, nobody waiting or dialling", stats)
	}
	gauges := []struct {
		name, labels string
		want         float64
	}{
		{"db_client_connection_count", orders + ",state=idle", float64(stats.IdleConns)},
		{"db_client_connection_count", orders + ",state=used", float64(stats.InUseConns)},
		{"db_client_connection_max", orders, metricstest.SeqMaxConns},
		{"db_client_connection_idle_max", orders, metricstest.SeqMaxConns},
		{"db_client_connection_idle_min", orders, metricstest.SeqMinIdle},
		{"db_client_connection_pending_requests", orders, 0},
		{"shoal_pool_leases", orders, 1},
		{"shoal_pool_dialing", orders, 0},
	}
	for _, g := range gauges {
		ss := series(t, fam, g.name, dto.MetricType_GAUGE)
		m, ok := ss[g.labels]
		if !ok {
			t.Errorf("%s{%s} missing; have %v", g.name, g.labels, keys(ss))
			continue
		}
		if got := value(m); got != g.want {
			t.Errorf("%s{%s} = %v, want %v", g.name, g.labels, got, g.want)
		}
		wantSeries := 1
		if g.name == "db_client_connection_count" {
			wantSeries = 2
		}
		if len(ss) != wantSeries { // the unattached pool has no gauges
			t.Errorf("%s has series %v, want only orders-db's", g.name, keys(ss))
		}
	}

	// Counters, from the observer; every one present for both pools.
	counters := []struct {
		name, labels string
		want         float64
	}{
		{"db_client_connection_timeouts_total", orders, 1},
		{"shoal_pool_leaks_total", orders, 1},
		{"shoal_pool_dial_errors_total", orders, 0},
		{"shoal_pool_rejections_total", orders, 0},
		{"shoal_pool_closes_total", orders + ",reason=idle", 0},
		{"shoal_pool_closes_total", orders + ",reason=lifetime", 0},
		{"db_client_connection_timeouts_total", other, 0},
		{"shoal_pool_leaks_total", other, 0},
	}
	for _, c := range counters {
		ss := series(t, fam, c.name, dto.MetricType_COUNTER)
		m, ok := ss[c.labels]
		if !ok {
			t.Errorf("%s{%s} missing; have %v", c.name, c.labels, keys(ss))
			continue
		}
		if got := value(m); got != c.want {
			t.Errorf("%s{%s} = %v, want %v", c.name, c.labels, got, c.want)
		}
	}
	if stats.CanceledAcquires != 1 || stats.Leaked != 1 {
		t.Errorf("Stats disagree with the sequence: %d canceled acquires, %d leaked; want 1 and 1", stats.CanceledAcquires, stats.Leaked)
	}
	closes := series(t, fam, "shoal_pool_closes_total", dto.MetricType_COUNTER)
	if len(metricstest.KnownReasons()) < 9 || metricstest.KnownReasons()[0] != shoal.ReasonDiscarded {
		t.Fatalf("known reasons %v: want at least the 9 of today, from ReasonDiscarded", metricstest.KnownReasons())
	}
	for _, r := range metricstest.KnownReasons() {
		for _, pool := range []string{orders, other} {
			if m, ok := closes[pool+",reason="+r.String()]; !ok || value(m) != 0 {
				t.Errorf("shoal_pool_closes_total{%s,reason=%s}: present %v, want present at 0", pool, r, ok)
			}
		}
	}

	// Histograms, from the observer.
	histograms := []struct {
		name     string
		count    uint64
		minSum   float64
		maxUnder map[float64]uint64 // bucket bound -> most observations at or under it
	}{
		// 3 acquires; the waiter waited at least metricstest.SeqHeldWait, so it is
		// above every bucket under that and the sum is at least that.
		{"db_client_connection_wait_time_seconds", 3, metricstest.SeqHeldWait.Seconds(), map[float64]uint64{0.05: 2}},
		// 2 leases ended: the first, held while the waiter waited, and
		// the third; the leaked one is still held.
		{"db_client_connection_use_time_seconds", 2, metricstest.SeqHeldWait.Seconds(), map[float64]uint64{0.05: 1}},
		// 2 dials: Warm's and one for the second acquire.
		{"db_client_connection_create_time_seconds", uint64(stats.Dials - stats.DialErrors), 0, nil},
	}
	if stats.Dials != 2 || stats.DialErrors != 0 {
		t.Errorf("Stats: %d dials, %d failed; want 2 and 0", stats.Dials, stats.DialErrors)
	}
	for _, h := range histograms {
		ss := series(t, fam, h.name, dto.MetricType_HISTOGRAM)
		if len(ss) != 2 {
			t.Errorf("%s has series %v, want orders-db's and idle-pool's", h.name, keys(ss))
		}
		if m, ok := ss[other]; !ok || m.GetHistogram().GetSampleCount() != 0 {
			t.Errorf("%s{%s}: present %v, want present and empty", h.name, other, ok)
		}
		m, ok := ss[orders]
		if !ok {
			t.Errorf("%s{%s} missing", h.name, orders)
			continue
		}
		hist := m.GetHistogram()
		if hist.GetSampleCount() != h.count {
			t.Errorf("%s count = %d, want %d", h.name, hist.GetSampleCount(), h.count)
		}
		if hist.GetSampleSum() < h.minSum {
			t.Errorf("%s sum = %vs, want at least %vs", h.name, hist.GetSampleSum(), h.minSum)
		}
		// The text format adds the +Inf bucket to DefaultBuckets.
		if len(hist.GetBucket()) != len(shoalprom.DefaultBuckets())+1 {
			t.Errorf("%s has %d buckets, want %d", h.name, len(hist.GetBucket()), len(shoalprom.DefaultBuckets())+1)
		}
		for _, b := range hist.GetBucket() {
			if most, ok := h.maxUnder[b.GetUpperBound()]; ok && b.GetCumulativeCount() > most {
				t.Errorf("%s bucket le=%v has %d, want at most %d", h.name, b.GetUpperBound(), b.GetCumulativeCount(), most)
			}
		}
		// Histograms say their unit in OpenMetrics; here they just end in _seconds.
		if !strings.HasSuffix(h.name, "_seconds") {
			t.Errorf("%s: histogram not in seconds", h.name)
		}
	}

	// Every series carries pool_name, and only the registered pools'.
	for name, f := range fam {
		if !strings.HasPrefix(name, "db_client_connection_") && !strings.HasPrefix(name, "shoal_pool_") {
			continue
		}
		for _, m := range f.GetMetric() {
			l := labelsOf(m)
			if !strings.HasPrefix(l, orders) && !strings.HasPrefix(l, other) {
				t.Errorf("%s{%s}: want pool_name orders-db or idle-pool", name, l)
			}
		}
	}

	// Unregister drops the pool's series; the name is free again.
	metrics.Unregister()
	fam = s.scrape()
	for name, f := range fam {
		for _, m := range f.GetMetric() {
			if strings.HasPrefix(labelsOf(m), orders) {
				t.Errorf("%s{%s} still reported after Unregister", name, labelsOf(m))
			}
		}
	}
	again, err := collector.Pool("orders-db")
	if err != nil {
		t.Fatalf("registering a name again after Unregister: %v", err)
	}
	again.Unregister()
	metrics.ObserveClose(shoal.Reason(99)) // safe after Unregister, and reports nothing
	if n := len(series(t, s.scrape(), "shoal_pool_closes_total", dto.MetricType_COUNTER)); n != len(metricstest.KnownReasons()) {
		t.Errorf("after Unregister and an unknown reason: %d close series, want idle-pool's %d", n, len(metricstest.KnownReasons()))
	}
}

func keys(m map[string]*dto.Metric) []string {
	var out []string
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// TestNewRefusesBadOptions: options Prometheus would refuse fail New with
// an error that names the field, instead of a panic in MustRegister or in
// the first Pool.
func TestNewRefusesBadOptions(t *testing.T) {
	for _, c := range []struct {
		name string
		opts shoalprom.Options
		want string // in the error
	}{
		{"buckets out of order", shoalprom.Options{Buckets: []float64{1, 0.5}}, "shoalprom: Options.Buckets must be in increasing order, got [1 0.5]"},
		{"a bucket twice", shoalprom.Options{Buckets: []float64{0.5, 0.5}}, "Options.Buckets"},
		{"a bucket not a number", shoalprom.Options{Buckets: []float64{math.NaN()}}, "shoalprom: Options.Buckets must be finite numbers"},
		{"an infinite bucket", shoalprom.Options{Buckets: []float64{1, math.Inf(1)}}, "shoalprom: Options.Buckets must be finite numbers"},
		{"a constant label the metrics vary by", shoalprom.Options{ConstLabels: prometheus.Labels{shoalprom.LabelPoolName: "x"}}, "ConstLabels"},
		{"an empty label name", shoalprom.Options{ConstLabels: prometheus.Labels{"": "x"}}, "ConstLabels"},
	} {
		if _, err := shoalprom.New(c.opts); err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: New: %v, want an error saying %q", c.name, err, c.want)
		}
	}
	var cfgErr *shoal.ConfigError
	if _, err := shoalprom.New(shoalprom.Options{Buckets: []float64{2, 1}}); !errors.As(err, &cfgErr) || cfgErr.Field != "Buckets" {
		t.Errorf("buckets out of order: %v, want a *shoal.ConfigError for Buckets", err)
	}
	if _, err := shoalprom.New(shoalprom.Options{Namespace: "app", Buckets: []float64{0.1, 1}, ConstLabels: prometheus.Labels{"env": "test"}}); err != nil {
		t.Errorf("good options refused: %v", err)
	}
}

func TestUnknownCloseReason(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	c := newCollector(t, shoalprom.Options{Namespace: "app", Buckets: []float64{1}})
	reg.MustRegister(c)
	m, err := c.Pool("p")
	if err != nil {
		t.Fatal(err)
	}
	m.ObserveClose(shoal.Reason(99))
	m.ObserveClose(shoal.ReasonIdle)
	m.ObserveAcquire(0)
	fam, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range fam {
		for _, mm := range f.GetMetric() {
			if v := value(mm); v != 0 {
				got[f.GetName()+"{"+labelsOf(mm)+"}"] = fmt.Sprint(v)
			}
			if h := mm.GetHistogram(); h != nil && h.GetSampleCount() > 0 {
				got[f.GetName()+"{"+labelsOf(mm)+"}"] = fmt.Sprintf("count=%d buckets=%d", h.GetSampleCount(), len(h.GetBucket()))
			}
		}
	}
	want := map[string]string{
		"app_shoal_pool_closes_total{pool_name=p,reason=reason(99)}": "1",
		"app_shoal_pool_closes_total{pool_name=p,reason=idle}":       "1",
		"app_db_client_connection_wait_time_seconds{pool_name=p}":    "count=1 buckets=1",
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

// newCollector returns a Collector made with opts, failing the test when
// New refuses them.
func newCollector(t testing.TB, opts shoalprom.Options) *shoalprom.Collector {
	t.Helper()
	c, err := shoalprom.New(opts)
	if err != nil {
		t.Fatal(err)
	}
	return c
}
