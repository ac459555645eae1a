package shoalotel_test

import (
	"context"
	"fmt"
	"log"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/poolmetrics/metricstest"
	"github.com/shoalpool/shoal/shoalotel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// conn stands for your connection type, dial for your Dial function.
type conn = metricstest.FakeConn

var dial = metricstest.FakeDial()

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
	defer orders.Unregister() // when the pool goes away before the process does

	pool, err := shoal.New(shoal.Config[*conn]{Dial: dial, MaxConns: 1, Observer: orders})
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close(ctx)
	lease, err := pool.Acquire(ctx) // dials the pool's first connection
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
	name, err := shoalotel.OriginName("postgres://app:s3cret@DB.internal/orders?password=s3cret")
	fmt.Println(name, err)
	_, err = shoalotel.OriginName("host=db user=app password=s3cret")
	fmt.Println(err)
	// Output:
	// postgres://db.internal:5432 <nil>
	// shoalotel: pool name from URL: not an absolute URL with a host
}
