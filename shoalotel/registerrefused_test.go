package shoalotel_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"go.opentelemetry.io/otel/metric"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"

	"github.com/shoalpool/shoal/shoalotel"
)

// noCallbacksProvider is the SDK's MeterProvider but for a meter that
// refuses every callback, as the API allows.
type noCallbacksProvider struct{ metric.MeterProvider }

func (p noCallbacksProvider) Meter(name string, opts ...metric.MeterOption) metric.Meter {
	return noCallbacksMeter{p.MeterProvider.Meter(name, opts...)}
}

type noCallbacksMeter struct{ metric.Meter }

func (noCallbacksMeter) RegisterCallback(metric.Callback, ...metric.Observable) (metric.Registration, error) {
	return nil, errors.New("no callbacks here")
}

// TestPoolRefusedNamesThePoolMasked: when the MeterProvider refuses a
// pool's callback, Pool's error names the pool as its series would, with
// a password in the name masked, and the name stays free.
func TestPoolRefusedNamesThePoolMasked(t *testing.T) {
	provider := sdkmetric.NewMeterProvider()
	t.Cleanup(func() { provider.Shutdown(context.Background()) })
	m, err := shoalotel.New(noCallbacksProvider{provider})
	if err != nil {
		t.Fatal(err)
	}
	_, err = m.Pool("postgres://app:hunter2@db:5432/orders")
	if err == nil || strings.Contains(err.Error(), "hunter2") ||
		!strings.Contains(err.Error(), `shoalotel: registering pool "postgres://app:`) || !strings.Contains(err.Error(), "no callbacks here") {
		t.Errorf("Pool with a refused callback: %v, want an error naming the pool with its password masked, and the refusal", err)
	}
	if _, err := m.Pool("postgres://app:hunter2@db:5432/orders"); errors.Is(err, shoalotel.ErrDuplicatePool) {
		t.Errorf("after a refused callback the name is taken: %v", err)
	}
}
