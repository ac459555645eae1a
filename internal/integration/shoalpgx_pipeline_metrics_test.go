package integration_test

import (
	"context"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
	"github.com/shoalpool/shoal/shoaldebug"
	"github.com/shoalpool/shoal/shoalotel"
	"github.com/shoalpool/shoal/shoalpgx"
	"github.com/shoalpool/shoal/shoalprom"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// With pool_pipeline, shoalprom, shoalotel and the live page show the pool as a
// whole under its name, shared connections included, and the shared
// connections apart under its name plus "/pipelined", where the leases are
// the statements in flight: three statements waiting on a row lock, on at
// most two shared connections, read as three leases over one or two used
// connections.
func TestPipelinedPoolExportedByMetrics(t *testing.T) {
	reg := prometheus.NewPedanticRegistry()
	collector, err := shoalprom.New(shoalprom.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg.MustRegister(collector)
	whole, err := collector.Pool("orders")
	if err != nil {
		t.Fatal(err)
	}
	defer whole.Unregister()
	shared, err := collector.Pool("orders/pipelined")
	if err != nil {
		t.Fatal(err)
	}
	defer shared.Unregister()
	page := shoaldebug.NewRegistry()
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	otel, err := shoalotel.New(provider)
	if err != nil {
		t.Fatal(err)
	}
	otelWhole, err := otel.Pool("orders")
	if err != nil {
		t.Fatal(err)
	}
	defer otelWhole.Unregister()
	otelShared, err := otel.Pool("orders/pipelined")
	if err != nil {
		t.Fatal(err)
	}
	defer otelShared.Unregister()

	pool := pgtest.NewPool(t, shoalpgx.ParseConfig, shoalpgx.NewWithConfig, func(c *shoalpgx.Config) {
		c.Name = "orders"
		c.MaxConns = 4
		c.Pipeline = 4
		c.Observer = shoal.MultiObserver(whole, otelWhole, page.NewObserver(""))
		c.PipelineObserver = shoal.MultiObserver(shared, otelShared, page.NewObserver(""))
	})
	ctx := testContext(t, 30*time.Second)
	table := pgtest.CounterTable(t, pool.Exec, "pipeobs_metrics")
	tx, err := pool.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const inFlight = 3
	errs := pgtest.BlockedUpdates(t, tx.Exec, pool.Exec, table, inFlight)
	if !waitFor(10*time.Second, func() bool { return pool.Stat().Pipelined().Leases == inFlight }) {
		t.Fatalf("never %d statements in flight: %+v", inFlight, pool.Stat().Pipelined())
	}
	// A statement that finds every shared connection busy dials one ahead
	// just after it is counted in Leases, so a dial may start at any time
	// up to here. Dials counts a dial when it starts and the dial histogram
	// when it ends: gathered with no dial in flight on either side and none
	// started between, the two agree.
	var (
		families []*dto.MetricFamily
		dials    int64
		used     int
	)
	if !waitFor(10*time.Second, func() bool {
		before := pool.Stat().Pipelined()
		if before.Dialing != 0 {
			return false
		}
		var err error
		if families, err = reg.Gather(); err != nil {
			t.Fatal(err)
		}
		after := pool.Stat().Pipelined()
		dials, used = after.Dials, after.InUseConns
		return after.Dialing == 0 && after.Dials == before.Dials && after.InUseConns == before.InUseConns
	}) {
		t.Fatalf("a shared connection still dialling after 10s: %+v", pool.Stat().Pipelined())
	}
	type series struct{ name, pool, state string }
	got := map[series]float64{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			v := m.GetGauge().GetValue()
			if h := m.GetHistogram(); h != nil {
				v = float64(h.GetSampleCount())
			}
			got[series{f.GetName(), labels[shoalprom.LabelPoolName], labels["state"]}] = v
		}
	}
	want := map[series]float64{
		{"shoal_pool_leases", "orders/pipelined", ""}:                        inFlight,
		{"db_client_connection_count", "orders/pipelined", "used"}:           float64(used),
		{"shoal_pool_leases", "orders", ""}:                                  1 + inFlight,
		{"db_client_connection_count", "orders", "used"}:                     float64(1 + used),
		{"db_client_connection_max", "orders", ""}:                           4,
		{"db_client_connection_create_time_seconds", "orders", ""}:           got[series{"db_client_connection_create_time_seconds", "orders/pipelined", ""}] + 1,
		{"db_client_connection_create_time_seconds", "orders/pipelined", ""}: float64(dials),
	}
	for s, w := range want {
		if got[s] != w {
			t.Errorf("%s{pool_name=%q,state=%q} = %v, want %v", s.name, s.pool, s.state, got[s], w)
		}
	}
	// Usually one or two: a statement that comes once the connection
	// before it has been held up a while passes it over for a new one
	// (Avoid), so on a slow machine each may have its own.
	if used < 1 || used > inFlight {
		t.Errorf("%d statements on %d shared connections, want one to %d", inFlight, used, inFlight)
	}

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		t.Fatal(err)
	}
	otelLeases := map[string]int64{}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			if sum, ok := m.Data.(metricdata.Sum[int64]); ok && m.Name == "shoal.pool.leases" {
				for _, dp := range sum.DataPoints {
					name, _ := dp.Attributes.Value("db.client.connection.pool.name")
					otelLeases[name.AsString()] = dp.Value
				}
			}
		}
	}
	if otelLeases["orders"] != 1+inFlight || otelLeases["orders/pipelined"] != inFlight {
		t.Errorf("shoalotel shoal.pool.leases: %v, want orders %d and orders/pipelined %d", otelLeases, 1+inFlight, inFlight)
	}

	leases := map[string]int{}
	for _, v := range page.Snapshot().Pools {
		leases[v.Name] = v.Stats.Leases
	}
	if leases["orders"] != 1+inFlight || leases["orders/pipelined"] != inFlight {
		t.Errorf("live page leases: %v, want orders %d and orders/pipelined %d", leases, 1+inFlight, inFlight)
	}

	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	for range inFlight {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
}
