package shoalotel_test

import (
	"context"
	"log/slog"
	"testing"

	"github.com/shoalpool/shoal/shoalotel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// The pools here fail dials and leak on purpose, and a pool with no
	// Logger logs to slog.Default(): the tests' default says nothing.
	slog.SetDefault(slog.New(slog.DiscardHandler))
	goleak.VerifyTestMain(m)
}

// newMetrics returns shoalotel metrics on an SDK MeterProvider read by a
// manual reader; the provider shuts down when the test ends.
func newMetrics(t testing.TB, opts ...shoalotel.Option) (*shoalotel.Metrics, *sdkmetric.ManualReader) {
	t.Helper()
	reader := sdkmetric.NewManualReader()
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(reader))
	t.Cleanup(func() { provider.Shutdown(context.Background()) })
	m, err := shoalotel.New(provider, opts...)
	if err != nil {
		t.Fatal(err)
	}
	return m, reader
}
