package shoalotel_test

import (
	"context"
	"fmt"
	"log"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalotel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// A pool watched through an OpenTelemetry MeterProvider: the metrics are
// the pool's Observer, and Attach hands them the pool's Stats once the
// pool exists.
func Example() {
	ctx := context.Background()
	// In a program: the MeterProvider with your exporter's reader.
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	defer provider.Shutdown(ctx)

	metrics, err := shoalotel.New(provider)
	if err != nil {
		log.Fatal(err)
	}
	orders, err := metrics.Pool("orders-db")
	if err != nil {
		log.Fatal(err)
	}
	cfg := shoal.Config[*fakeConn]{
		Dial:     fakeDial(),
		MaxConns: 1,
		MinIdle:  1,
		Observer: orders,
	}
	pool, err := shoal.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer orders.Unregister()
	defer pool.Close(ctx)

	if err := pool.Warm(ctx); err != nil {
		log.Fatal(err)
	}
	lease, err := pool.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	defer lease.Release()

	var rm metricdata.ResourceMetrics
	if err := reader.Collect(ctx, &rm); err != nil {
		log.Fatal(err)
	}
	for _, sm := range rm.ScopeMetrics {
		for _, m := range sm.Metrics {
			switch data := m.Data.(type) {
			case metricdata.Sum[int64]:
				for _, p := range data.DataPoints {
					switch m.Name {
					case "db.client.connection.count":
						state, _ := p.Attributes.Value("db.client.connection.state")
						fmt.Println(m.Name, state.String(), p.Value)
					case "db.client.connection.max":
						fmt.Println(m.Name, p.Value)
					}
				}
			case metricdata.Histogram[float64]:
				if m.Name == "db.client.connection.wait_time" {
					fmt.Println(m.Name, m.Unit, "count", data.DataPoints[0].Count)
				}
			}
		}
	}
	// Unordered output:
	// db.client.connection.count idle 0
	// db.client.connection.count used 1
	// db.client.connection.max 1
	// db.client.connection.wait_time s count 1
}

// Naming a pool after the server it talks to, without its credentials.
func ExampleOriginName() {
	for _, raw := range []string{
		"postgres://app:s3cret@DB.internal/orders?sslmode=require",
		"https://api.example.com/v1/users?token=abc",
		"http://[::1]:8080/",
	} {
		name, err := shoalotel.OriginName(raw)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(name)
	}
	// Output:
	// postgres://db.internal:5432
	// https://api.example.com:443
	// http://[::1]:8080
}
