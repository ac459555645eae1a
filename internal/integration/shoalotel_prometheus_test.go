package integration_test

import (
	"context"
	"slices"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalotel"
	otelprom "go.opentelemetry.io/otel/exporters/prometheus"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
)

// TestShoalotelThroughThePrometheusExporter: shoalotel's instruments,
// exported to Prometheus by the OpenTelemetry exporter, come out under the
// names docs/metrics.md gives, each with the pool's name in the label
// db_client_connection_pool_name.
func TestShoalotelThroughThePrometheusExporter(t *testing.T) {
	reg := prometheus.NewRegistry()
	exp, err := otelprom.New(otelprom.WithRegisterer(reg))
	if err != nil {
		t.Fatal(err)
	}
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(exp))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	metrics, err := shoalotel.New(provider)
	if err != nil {
		t.Fatal(err)
	}
	orders, err := metrics.Pool("orders")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := shoal.New(shoal.Config[int]{Name: "orders", Observer: orders,
		Dial: func(context.Context) (int, error) { return 1, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close(context.Background())
	lease, err := pool.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	lease.Release()

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	pools := map[string]string{} // metric name: its db_client_connection_pool_name
	for _, f := range families {
		for _, m := range f.GetMetric() {
			for _, l := range m.GetLabel() {
				if l.GetName() == "db_client_connection_pool_name" {
					pools[f.GetName()] = l.GetValue()
				}
			}
		}
	}
	for _, name := range []string{"db_client_connection_wait_time_seconds", "db_client_connection_create_time_seconds",
		"db_client_connection_use_time_seconds", "db_client_connection_max", "db_client_connection_count"} {
		if got, ok := pools[name]; !ok || got != "orders" {
			names := make([]string, 0, len(pools))
			for n := range pools {
				names = append(names, n)
			}
			slices.Sort(names)
			t.Errorf("%s with db_client_connection_pool_name=orders is not among the exported metrics %v", name, names)
		}
	}
}
