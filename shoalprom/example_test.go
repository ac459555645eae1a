package shoalprom_test

import (
	"context"
	"fmt"
	"log"
	"strings"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/common/expfmt"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/poolmetrics/metricstest"
	"github.com/shoalpool/shoal/shoalprom"
)

// conn stands for your connection type, dial for your Dial function.
type conn = metricstest.FakeConn

var dial = metricstest.FakeDial()

// A pool watched by Prometheus: the metrics are the pool's Observer, and
// Attach hands them the pool's Stats once the pool exists.
func Example() {
	reg := prometheus.NewRegistry()
	collector, err := shoalprom.New(shoalprom.Options{})
	if err != nil {
		log.Fatal(err)
	}
	reg.MustRegister(collector) // or prometheus.MustRegister, served by promhttp.Handler()

	metrics, err := collector.Pool("orders-db")
	if err != nil {
		log.Fatal(err)
	}
	cfg := shoal.Config[*conn]{
		Dial:     dial,
		MaxConns: 1,
		MinIdle:  1,
		Observer: metrics,
	}
	pool, err := shoal.New(cfg)
	if err != nil {
		log.Fatal(err)
	}
	defer metrics.Unregister()
	defer pool.Close(context.Background())

	ctx := context.Background()
	if err := pool.Warm(ctx); err != nil {
		log.Fatal(err)
	}
	lease, err := pool.Acquire(ctx)
	if err != nil {
		log.Fatal(err)
	}
	printMetrics(reg, "db_client_connection_count", "db_client_connection_max", "db_client_connection_idle_min",
		"db_client_connection_wait_time_seconds_count", "db_client_connection_use_time_seconds_count")
	lease.Release()

	// Output:
	// db_client_connection_count{pool_name="orders-db",state="idle"} 0
	// db_client_connection_count{pool_name="orders-db",state="used"} 1
	// db_client_connection_idle_min{pool_name="orders-db"} 1
	// db_client_connection_max{pool_name="orders-db"} 1
	// db_client_connection_use_time_seconds_count{pool_name="orders-db"} 0
	// db_client_connection_wait_time_seconds_count{pool_name="orders-db"} 1
}

// printMetrics prints the samples, in the text exposition format, of the
// named metrics (a histogram's _count, _sum and _bucket are names too).
func printMetrics(reg *prometheus.Registry, names ...string) {
	families, err := reg.Gather()
	if err != nil {
		log.Fatal(err)
	}
	var text strings.Builder
	for _, f := range families {
		if _, err := expfmt.MetricFamilyToText(&text, f); err != nil {
			log.Fatal(err)
		}
	}
	for line := range strings.Lines(text.String()) {
		for _, name := range names {
			if strings.HasPrefix(line, name+"{") {
				fmt.Print(line)
			}
		}
	}
}

// Naming a pool after the server it talks to, without its credentials.
func ExampleOriginName() {
	for _, raw := range []string{
		"postgres://app:s3cret@DB.internal/orders?sslmode=require&password=s3cret",
		"https://api.example.com/v1/users?token=abc",
		"http://[::1]:8080/",
		"grpc://etcd-0:2379",
	} {
		name, err := shoalprom.OriginName(raw)
		if err != nil {
			fmt.Println("error:", err)
			continue
		}
		fmt.Println(name)
	}
	_, err := shoalprom.OriginName("host=db user=app password=s3cret")
	fmt.Println(err)
	// Output:
	// postgres://db.internal:5432
	// https://api.example.com:443
	// http://[::1]:8080
	// grpc://etcd-0:2379
	// shoalprom: pool name from URL: not an absolute URL with a host
}

// Watching one pool with Prometheus and another observer at once.
func ExamplePoolMetrics_multiObserver() {
	collector, err := shoalprom.New(shoalprom.Options{Namespace: "shop"})
	if err != nil {
		log.Fatal(err)
	}
	metrics, err := collector.Pool("cache")
	if err != nil {
		log.Fatal(err)
	}
	var mine shoal.Observer = shoal.BaseObserver{} // yours, or shoalotel's
	pool, err := shoal.New(shoal.Config[*conn]{
		Dial:     dial,
		MaxConns: 2,
		Observer: shoal.MultiObserver(metrics, mine),
	})
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close(context.Background())
	fmt.Println(metrics.Name())
	// Output: cache
}

// Per-host gauges for a pool whose connections go to several servers. With
// shoalpgx and several hosts in the connection string, pass the pool's
// Hosts method; here a function stands in for it.
func ExamplePoolMetrics_AttachHosts() {
	reg := prometheus.NewRegistry()
	collector, err := shoalprom.New(shoalprom.Options{})
	if err != nil {
		log.Fatal(err)
	}
	reg.MustRegister(collector)
	metrics, err := collector.Pool("orders-db")
	if err != nil {
		log.Fatal(err)
	}
	defer metrics.Unregister()

	checked := time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)
	hosts := func() []shoal.HostStat { // in a program: pool.Hosts
		return []shoal.HostStat{
			{Addr: "db-a:5432", Open: 4, Role: "primary", LastCheck: checked},
			{Addr: "db-b:5432", Open: 1, Role: "standby", Lag: 250 * time.Millisecond, LastCheck: checked},
		}
	}
	detach := metrics.AttachHosts(hosts)
	defer detach()

	printMetrics(reg, "shoal_pool_host_connection_open", "shoal_pool_host_role",
		"shoal_pool_host_last_check_timestamp_seconds", "shoal_pool_host_lag_seconds")
	// Output:
	// shoal_pool_host_connection_open{host="db-a:5432",pool_name="orders-db"} 4
	// shoal_pool_host_connection_open{host="db-b:5432",pool_name="orders-db"} 1
	// shoal_pool_host_lag_seconds{host="db-a:5432",pool_name="orders-db"} 0
	// shoal_pool_host_lag_seconds{host="db-b:5432",pool_name="orders-db"} 0.25
	// shoal_pool_host_last_check_timestamp_seconds{host="db-a:5432",pool_name="orders-db"} 1.767323045e+09
	// shoal_pool_host_last_check_timestamp_seconds{host="db-b:5432",pool_name="orders-db"} 1.767323045e+09
	// shoal_pool_host_role{host="db-a:5432",pool_name="orders-db",role="primary"} 1
	// shoal_pool_host_role{host="db-b:5432",pool_name="orders-db",role="standby"} 1
}
