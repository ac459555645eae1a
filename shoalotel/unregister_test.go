package shoalotel_test

import (
	"context"
	"errors"
	"log"
	"strings"
	"sync"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/shoalpool/shoal/shoalotel"
)

// refusingProvider is the SDK's MeterProvider but for one thing the SDK
// never does and the API allows: refusing to drop a callback. With keep,
// the callback is kept too, and still runs at every collection.
type refusingProvider struct {
	metric.MeterProvider
	keep bool
}

func (p refusingProvider) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	return refusingMeter{p.MeterProvider.Meter(name, opts...), p.keep}
}

type refusingMeter struct {
	metric.Meter
	keep bool
}

func (m refusingMeter) RegisterCallback(f metric.Callback, insts ...metric.Observable) (metric.Registration, error) {
	reg, err := m.Meter.RegisterCallback(f, insts...)
	return refusingRegistration{reg, m.keep}, err
}

type refusingRegistration struct {
	metric.Registration
	keep bool
}

func (r refusingRegistration) Unregister() error {
	if !r.keep {
		_ = r.Registration.Unregister()
	}
	return errors.New("callback still in use")
}

type handlerFunc func(error)

func (f handlerFunc) Handle(err error) { f(err) }

// TestUnregisterHandsRefusalToOtelHandle: Unregister returns nothing, as
// shoalprom's; a MeterProvider's refusal to drop the callback reaches
// OpenTelemetry's error handler, naming the pool, and the name is free
// again all the same.
func TestUnregisterHandsRefusalToOtelHandle(t *testing.T) {
	var (
		mu      sync.Mutex
		handled []error
	)
	otel.SetErrorHandler(handlerFunc(func(err error) {
		mu.Lock()
		defer mu.Unlock()
		handled = append(handled, err)
	}))
	// Back to what the default handler does.
	t.Cleanup(func() { otel.SetErrorHandler(handlerFunc(func(err error) { log.Print(err) })) })

	provider := sdkmetric.NewMeterProvider()
	t.Cleanup(func() { provider.Shutdown(context.Background()) })
	m, err := shoalotel.New(refusingProvider{MeterProvider: provider})
	if err != nil {
		t.Fatal(err)
	}
	p, err := m.Pool("orders")
	if err != nil {
		t.Fatal(err)
	}
	p.Unregister()
	mu.Lock()
	defer mu.Unlock()
	if len(handled) != 1 || !strings.Contains(handled[0].Error(), `shoalotel: unregistering pool "orders": callback still in use`) {
		t.Errorf("errors handled: %v, want the refusal, naming the pool", handled)
	}
	if _, err := m.Pool("orders"); err != nil {
		t.Errorf("registering the name again after a refused Unregister: %v", err)
	}
}
