package shoalotel_test

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/poolmetrics/metricstest"
	"github.com/shoalpool/shoal/shoalotel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// collected is one collection from a manual reader, by instrument name.
type collected map[string]metricdata.Metrics

func collect(t testing.TB, reader *sdkmetric.ManualReader) collected {
	t.Helper()
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	out := make(collected)
	for _, sm := range rm.ScopeMetrics {
		if sm.Scope.Name != shoalotel.ScopeName || sm.Scope.SchemaURL != shoalotel.SchemaURL {
			t.Errorf("scope %q %q, want %q %q", sm.Scope.Name, sm.Scope.SchemaURL, shoalotel.ScopeName, shoalotel.SchemaURL)
		}
		for _, m := range sm.Metrics {
			out[m.Name] = m
		}
	}
	return out
}

// attrs renders an attribute set as "k=v,k=v", sorted.
func attrs(s attribute.Set) string {
	var parts []string
	for _, kv := range s.ToSlice() {
		parts = append(parts, string(kv.Key)+"="+kv.Value.String())
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}

// sum returns the points of an int64 sum instrument by attributes, failing
// when it is missing, not a sum, or of the wrong monotonicity or unit.
func (c collected) sum(t *testing.T, name, unit string, monotonic bool) map[string]int64 {
	t.Helper()
	m, ok := c[name]
	if !ok {
		t.Fatalf("instrument %s missing from the collection", name)
	}
	s, ok := m.Data.(metricdata.Sum[int64])
	if !ok {
		t.Fatalf("instrument %s is %T, want an int64 sum", name, m.Data)
	}
	if s.IsMonotonic != monotonic || s.Temporality != metricdata.CumulativeTemporality {
		t.Errorf("instrument %s: monotonic %v, temporality %v; want monotonic %v, cumulative", name, s.IsMonotonic, s.Temporality, monotonic)
	}
	if m.Unit != unit {
		t.Errorf("instrument %s has unit %q, want %q", name, m.Unit, unit)
	}
	out := make(map[string]int64)
	for _, p := range s.DataPoints {
		out[attrs(p.Attributes)] = p.Value
	}
	return out
}

// maybeSum is sum for an instrument that may have no points at all, which
// the SDK leaves out of a collection.
func (c collected) maybeSum(t *testing.T, name, unit string, monotonic bool) map[string]int64 {
	t.Helper()
	if _, ok := c[name]; !ok {
		return nil
	}
	return c.sum(t, name, unit, monotonic)
}

// histogram returns the points of a float64 histogram by attributes.
func (c collected) histogram(t *testing.T, name string) map[string]metricdata.HistogramDataPoint[float64] {
	t.Helper()
	m, ok := c[name]
	if !ok {
		t.Fatalf("instrument %s missing from the collection", name)
	}
	h, ok := m.Data.(metricdata.Histogram[float64])
	if !ok {
		t.Fatalf("instrument %s is %T, want a float64 histogram", name, m.Data)
	}
	if m.Unit != "s" {
		t.Errorf("instrument %s has unit %q, want s", name, m.Unit)
	}
	out := make(map[string]metricdata.HistogramDataPoint[float64])
	for _, p := range h.DataPoints {
		out[attrs(p.Attributes)] = p
	}
	return out
}

func TestManualReaderKnownSequence(t *testing.T) {
	metrics, reader := newMetrics(t)
	p, err := metrics.Pool("orders-db")
	if err != nil {
		t.Fatal(err)
	}
	// A second pool, registered but never used nor attached: its counters
	// start at zero, it has no observable values, and nothing of
	// orders-db leaks into its points.
	if _, err := metrics.Pool("idle-pool"); err != nil {
		t.Fatal(err)
	}

	const orders, other = "db.client.connection.pool.name=orders-db", "db.client.connection.pool.name=idle-pool"
	pool, cleanup := metricstest.RunSequence(t, p, func() bool {
		return collect(t, reader).sum(t, "shoal.pool.leaks", "{lease}", true)[orders] == 1
	})
	defer cleanup()

	stats := pool.Stats()
	c := collect(t, reader)
	if stats.IdleConns != 1 || stats.InUseConns != 1 || stats.Waiting != 0 || stats.Leases != 1 || stats.Dialing != 0 {
		t.Fatalf("pool after the sequence: %+v, want 1 idle, 1 in use, 1 lease, nobody waiting or dialling", stats)
	}

	// Observable up-down counters, read from Stats at collection.
	observed := []struct {
		name, unit string
		want       map[string]int64 // every point, by attributes
	}{
		{"db.client.connection.count", "{connection}", map[string]int64{
			orders + ",db.client.connection.state=idle": int64(stats.IdleConns),
			orders + ",db.client.connection.state=used": int64(stats.InUseConns),
		}},
		{"db.client.connection.max", "{connection}", map[string]int64{orders: metricstest.SeqMaxConns}},
		{"db.client.connection.idle.max", "{connection}", map[string]int64{orders: metricstest.SeqMaxConns}},
		{"db.client.connection.idle.min", "{connection}", map[string]int64{orders: metricstest.SeqMinIdle}},
		{"db.client.connection.pending_requests", "{request}", map[string]int64{orders: 0}},
		{"shoal.pool.leases", "{lease}", map[string]int64{orders: 1}},
		{"shoal.pool.dialing", "{connection}", map[string]int64{orders: 0}},
	}
	for _, o := range observed {
		got := c.sum(t, o.name, o.unit, false)
		if fmt.Sprint(got) != fmt.Sprint(o.want) {
			t.Errorf("%s = %v, want %v", o.name, got, o.want)
		}
	}

	// Counters, from the observer, present at zero for the idle pool too.
	counters := []struct {
		name, unit string
		want       map[string]int64
	}{
		{"db.client.connection.timeouts", "{timeout}", map[string]int64{orders: 1, other: 0}},
		{"shoal.pool.leaks", "{lease}", map[string]int64{orders: 1, other: 0}},
		{"shoal.pool.dial_errors", "{error}", map[string]int64{orders: 0, other: 0}},
		{"shoal.pool.rejections", "{request}", map[string]int64{orders: 0, other: 0}},
	}
	for _, ct := range counters {
		got := c.sum(t, ct.name, ct.unit, true)
		if fmt.Sprint(got) != fmt.Sprint(ct.want) {
			t.Errorf("%s = %v, want %v", ct.name, got, ct.want)
		}
	}
	closes := c.sum(t, "shoal.pool.closes", "{connection}", true)
	wantCloses := map[string]int64{}
	if len(metricstest.KnownReasons()) < 9 || metricstest.KnownReasons()[0] != shoal.ReasonDiscarded {
		t.Fatalf("known reasons %v: want at least the 9 of today, from ReasonDiscarded", metricstest.KnownReasons())
	}
	for _, r := range metricstest.KnownReasons() {
		for _, pool := range []string{orders, other} {
			wantCloses[pool+",shoal.close.reason="+r.String()] = 0
		}
	}
	if fmt.Sprint(closes) != fmt.Sprint(wantCloses) {
		t.Errorf("shoal.pool.closes = %v, want %v", closes, wantCloses)
	}
	if stats.CanceledAcquires != 1 || stats.Leaked != 1 || stats.Dials != 2 || stats.DialErrors != 0 {
		t.Errorf("Stats disagree with the sequence: %+v; want 1 canceled acquire, 1 leak, 2 dials, none failed", stats)
	}

	// Histograms, from the observer; only the pool that recorded has points.
	histograms := []struct {
		name     string
		count    uint64
		minSum   float64
		maxUnder map[float64]uint64 // boundary -> most observations at or under it
	}{
		// 3 acquires; the waiter waited at least metricstest.SeqHeldWait.
		{"db.client.connection.wait_time", 3, metricstest.SeqHeldWait.Seconds(), map[float64]uint64{0.05: 2}},
		// 2 leases ended: the first, held while the waiter waited, and
		// the third; the leaked one is still held.
		{"db.client.connection.use_time", 2, metricstest.SeqHeldWait.Seconds(), map[float64]uint64{0.05: 1}},
		// 2 dials: Warm's and one for the second acquire.
		{"db.client.connection.create_time", uint64(stats.Dials - stats.DialErrors), 0, nil},
	}
	for _, h := range histograms {
		points := c.histogram(t, h.name)
		if len(points) != 1 {
			t.Errorf("%s has points for %d attribute sets, want orders-db's only", h.name, len(points))
		}
		pt, ok := points[orders]
		if !ok {
			t.Errorf("%s{%s} missing", h.name, orders)
			continue
		}
		if pt.Count != h.count {
			t.Errorf("%s count = %d, want %d", h.name, pt.Count, h.count)
		}
		if pt.Sum < h.minSum {
			t.Errorf("%s sum = %vs, want at least %vs", h.name, pt.Sum, h.minSum)
		}
		if !slices.Equal(pt.Bounds, shoalotel.DefaultBuckets()) {
			t.Errorf("%s bounds = %v, want %v", h.name, pt.Bounds, shoalotel.DefaultBuckets())
		}
		var cumulative uint64
		for i, b := range pt.Bounds {
			cumulative += pt.BucketCounts[i]
			if most, ok := h.maxUnder[b]; ok && cumulative > most {
				t.Errorf("%s: %d observations at or under %v, want at most %d", h.name, cumulative, b, most)
			}
		}
	}

	// Unregister stops the observable instruments for the pool and frees
	// its name.
	p.Unregister()
	if got := collect(t, reader).maybeSum(t, "db.client.connection.max", "{connection}", false); len(got) != 0 {
		t.Errorf("db.client.connection.max after Unregister: %v, want no points", got)
	}
	again, err := metrics.Pool("orders-db")
	if err != nil {
		t.Fatalf("registering a name again after Unregister: %v", err)
	}
	again.Unregister()
	p.Unregister() // a second call does nothing
}

func TestOptionsAndUnknownReason(t *testing.T) {
	m, reader := newMetrics(t, shoalotel.WithBuckets(0.5, 1))
	p, err := m.Pool("p")
	if err != nil {
		t.Fatal(err)
	}
	p.ObserveClose(shoal.Reason(99))
	p.ObserveAcquire(2 * time.Second)
	c := collect(t, reader)
	if got := c.sum(t, "shoal.pool.closes", "{connection}", true)["db.client.connection.pool.name=p,shoal.close.reason=reason(99)"]; got != 1 {
		t.Errorf("close for an unknown reason counted %d times, want 1", got)
	}
	pt := c.histogram(t, "db.client.connection.wait_time")["db.client.connection.pool.name=p"]
	if !slices.Equal(pt.Bounds, []float64{0.5, 1}) || !slices.Equal(pt.BucketCounts, []uint64{0, 0, 1}) {
		t.Errorf("wait_time with WithBuckets(0.5, 1): bounds %v counts %v", pt.Bounds, pt.BucketCounts)
	}
}

// TestGlobalProvider: New(nil) uses the global MeterProvider (a no-op one
// unless the program set its own), and the observer works on it.
// Bounds shoalprom refuses, New refuses too, with the global
// MeterProvider as with the SDK's, which would accept some (the global one
// before the SDK is set accepts any): before, New(nil, WithBuckets(NaN, 1))
// succeeded.
func TestNewRefusesTheBucketsShoalpromRefuses(t *testing.T) {
	for _, b := range [][]float64{{math.NaN(), 1}, {2, 1}, {0.5, 0.5}, {1, math.Inf(1)}} {
		for _, p := range []metric.MeterProvider{nil, sdkmetric.NewMeterProvider()} {
			_, err := shoalotel.New(p, shoalotel.WithBuckets(b...))
			if err == nil || !strings.Contains(err.Error(), "shoalotel: WithBuckets must be") {
				t.Errorf("New(%T, WithBuckets(%v)): %v, want an error naming WithBuckets", p, b, err)
			}
		}
	}
}

func TestGlobalProvider(t *testing.T) {
	m, err := shoalotel.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Pool("p")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range metricstest.ObserverCalls(p) {
		c.Call()
	}
	p.Unregister()
}
