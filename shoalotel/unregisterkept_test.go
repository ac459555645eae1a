package shoalotel_test

import (
	"context"
	"fmt"
	"log"
	"testing"

	"go.opentelemetry.io/otel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/poolmetrics/metricstest"
	"github.com/shoalpool/shoal/shoalotel"
)

// TestUnregisteredPoolNotReportedWhenCallbackKept: when the MeterProvider
// refuses to drop an unregistered pool's callback, the callback reports
// nothing more of the pool, neither alone nor beside the pool registered
// next under its name.
func TestUnregisteredPoolNotReportedWhenCallbackKept(t *testing.T) {
	otel.SetErrorHandler(handlerFunc(func(error) {})) // the refusal is expected
	t.Cleanup(func() { otel.SetErrorHandler(handlerFunc(func(err error) { log.Print(err) })) })

	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { provider.Shutdown(context.Background()) })
	m, err := shoalotel.New(refusingProvider{MeterProvider: provider, keep: true})
	if err != nil {
		t.Fatal(err)
	}
	set := &otelSet{m: m, reader: reader}
	read := func() string {
		return fmt.Sprint(set.Read(t).Only(metricstest.Max, metricstest.HostOpen, metricstest.BargeMisses))
	}

	old, err := m.Pool("orders")
	if err != nil {
		t.Fatal(err)
	}
	old.Attach(func() shoal.Stats { return shoal.Stats{MaxConns: 3, BargeMisses: 2} })
	old.AttachHosts(func() []shoal.HostStat { return []shoal.HostStat{{Addr: "db:5432", Open: 1}} })
	old.Unregister()
	if got, want := read(), fmt.Sprint(metricstest.Values{}); got != want {
		t.Errorf("after Unregister, the callback kept: %s, want %s", got, want)
	}

	next, err := m.Pool("orders")
	if err != nil {
		t.Fatal(err)
	}
	next.Attach(func() shoal.Stats { return shoal.Stats{MaxConns: 5} })
	want := fmt.Sprint(metricstest.Values{
		metricstest.Key(metricstest.Max, "pool=orders"):         5,
		metricstest.Key(metricstest.BargeMisses, "pool=orders"): 2, // continued from the old
	})
	if got := read(); got != want {
		t.Errorf("the name registered again, the old callback kept: %s, want %s", got, want)
	}
}
