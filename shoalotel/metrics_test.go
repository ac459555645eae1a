package shoalotel_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalotel"
	"go.opentelemetry.io/otel/attribute"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// collected is one collection from a manual reader, by instrument name.
type collected map[string]metricdata.Metrics

func collect(t *testing.T, reader *sdkmetric.ManualReader) collected {
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
	pool, cleanup := runSequence(t, p, func() bool {
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
		{"db.client.connection.max", "{connection}", map[string]int64{orders: seqMaxConns}},
		{"db.client.connection.idle.max", "{connection}", map[string]int64{orders: seqMaxConns}},
		{"db.client.connection.idle.min", "{connection}", map[string]int64{orders: seqMinIdle}},
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
	if len(knownReasons()) < 9 || knownReasons()[0] != shoal.ReasonDiscarded {
		t.Fatalf("known reasons %v: want at least the 9 of today, from ReasonDiscarded", knownReasons())
	}
	for _, r := range knownReasons() {
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
		// 3 acquires; the waiter waited at least seqHeldWait.
		{"db.client.connection.wait_time", 3, seqHeldWait.Seconds(), map[float64]uint64{0.05: 2}},
		// 2 leases ended: the first, held while the waiter waited, and
		// the third; the leaked one is still held.
		{"db.client.connection.use_time", 2, seqHeldWait.Seconds(), map[float64]uint64{0.05: 1}},
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

func TestPoolNames(t *testing.T) {
	provider := sdkmetric.NewMeterProvider()
	defer provider.Shutdown(context.Background())
	m, err := shoalotel.New(provider)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := m.Pool(""); err == nil {
		t.Error("empty name accepted")
	}
	if _, err := m.Pool("\xff"); err == nil {
		t.Error("invalid UTF-8 accepted")
	}
	if _, err := m.Pool("a"); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Pool("a"); !errors.Is(err, shoalotel.ErrDuplicatePool) {
		t.Errorf("duplicate name: got %v, want ErrDuplicatePool", err)
	}
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

// TestCallbackReadsStatsOnlyAtCollection: Stats is called by the
// collection, once per collection, not by the observer; detaching reads it
// once more (for the pool's last barge-miss count), and then never.
func TestCallbackReadsStatsOnlyAtCollection(t *testing.T) {
	m, reader := newMetrics(t)
	p, err := m.Pool("p")
	if err != nil {
		t.Fatal(err)
	}
	var calls atomic.Int32
	detach := p.Attach(func() shoal.Stats { calls.Add(1); return shoal.Stats{MaxConns: 3} })
	p.ObserveAcquire(time.Millisecond)
	if n := calls.Load(); n != 0 {
		t.Errorf("Stats called %d times before any collection", n)
	}
	collect(t, reader)
	collect(t, reader)
	if n := calls.Load(); n != 2 {
		t.Errorf("Stats called %d times in 2 collections, want 2", n)
	}
	detach()
	detach()
	if got := collect(t, reader).maybeSum(t, "db.client.connection.max", "{connection}", false); len(got) != 0 {
		t.Errorf("after detach: %v, want no points", got)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("Stats called %d times after detach, want 3: the two collections and detach's last read", n)
	}
}

// TestSharedName: pools that share a name (one replacing another while it
// drains) are attached to the same metrics and reported as their sum.
func TestSharedName(t *testing.T) {
	m, reader := newMetrics(t)
	p, err := m.Pool("https://api.example.com:443")
	if err != nil {
		t.Fatal(err)
	}
	const pool = "db.client.connection.pool.name=https://api.example.com:443"
	old := p.Attach(func() shoal.Stats {
		return shoal.Stats{MaxConns: 4, IdleConns: 0, InUseConns: 2, Leases: 2, Waiting: 0}
	})
	p.Attach(func() shoal.Stats {
		return shoal.Stats{MaxConns: 4, IdleConns: 1, InUseConns: 1, Leases: 1, Waiting: 3, Dialing: 1}
	})
	check := func(when string, want map[string]map[string]int64) {
		t.Helper()
		c := collect(t, reader)
		for name, w := range want {
			if got := c.sum(t, name, c[name].Unit, false); fmt.Sprint(got) != fmt.Sprint(w) {
				t.Errorf("%s: %s = %v, want %v", when, name, got, w)
			}
		}
	}
	check("both attached", map[string]map[string]int64{
		"db.client.connection.count": {
			pool + ",db.client.connection.state=idle": 1,
			pool + ",db.client.connection.state=used": 3,
		},
		"db.client.connection.max":              {pool: 8},
		"db.client.connection.pending_requests": {pool: 3},
		"shoal.pool.leases":                     {pool: 3},
		"shoal.pool.dialing":                    {pool: 1},
	})
	old()
	check("old pool detached", map[string]map[string]int64{
		"db.client.connection.count": {
			pool + ",db.client.connection.state=idle": 1,
			pool + ",db.client.connection.state=used": 1,
		},
		"db.client.connection.max": {pool: 4},
	})
}

// TestGlobalProvider: New(nil) uses the global MeterProvider (a no-op one
// unless the program set its own), and the observer works on it.
func TestGlobalProvider(t *testing.T) {
	m, err := shoalotel.New(nil)
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Pool("p")
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range observerCalls(p) {
		c.call()
	}
	p.Unregister()
}

// knownReasons lists every shoal.Reason the core names, found as the
// packages under test find them, so that a reason added to the core needs
// no change here.
func knownReasons() []shoal.Reason {
	var out []shoal.Reason
	for r := shoal.Reason(1); r.String() != fmt.Sprintf("reason(%d)", int(r)); r++ {
		out = append(out, r)
	}
	return out
}
