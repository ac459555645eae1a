package integration_test

import (
	"context"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalhttp"
	"github.com/shoalpool/shoal/shoalotel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// newTraced returns shoalotel metrics whose wait spans go, at threshold, to
// a TracerProvider that records every span, and a tracer of it.
func newTraced(t *testing.T, threshold time.Duration) (*shoalotel.Metrics, *tracetest.SpanRecorder, trace.Tracer) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	provider := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
	t.Cleanup(func() { _ = provider.Shutdown(context.Background()) })
	m, err := shoalotel.New(provider, shoalotel.WithWaitSpans(tp, threshold))
	if err != nil {
		t.Fatal(err)
	}
	return m, rec, tp.Tracer("test")
}

// waitSpans returns the ended spans named shoalotel.WaitSpanName.
func waitSpans(rec *tracetest.SpanRecorder) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == shoalotel.WaitSpanName {
			out = append(out, s)
		}
	}
	return out
}

// TestWaitSpanThroughShoalhttp: shoalhttp passes the request's context to
// the pool, so a request that waited for its origin's one connection shows
// the wait under the request's span.
func TestWaitSpanThroughShoalhttp(t *testing.T) {
	m, rec, tracer := newTraced(t, 5*time.Millisecond)
	release := make(chan struct{})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/slow" {
			<-release
		}
	}))
	defer srv.Close()
	tr, err := shoalhttp.NewTransport(shoalhttp.Options{
		MaxConns: 1,
		Observer: func(origin string) shoal.Observer {
			obs, err := m.Pool(origin)
			if err != nil {
				t.Error(err)
				return nil
			}
			return obs
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer tr.Close(context.Background())
	client := &http.Client{Transport: tr}
	get := func(ctx context.Context, path string) error {
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL+path, nil)
		resp, err := client.Do(req)
		if err != nil {
			return err
		}
		return resp.Body.Close()
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := get(context.Background(), "/slow"); err != nil {
			t.Error(err)
		}
	})
	ctx, parent := tracer.Start(context.Background(), "request")
	// Wait until the slow request holds the one connection, then let it
	// go 30ms after the traced request starts waiting.
	if !waitFor(10*time.Second, func() bool { return inUse(tr) == 1 }) {
		t.Fatal("the slow request never held the connection")
	}
	go func() {
		defer close(release)
		if !waitFor(10*time.Second, func() bool { return waiting(tr) == 1 }) {
			t.Error("the traced request never waited")
			return
		}
		time.Sleep(30 * time.Millisecond)
	}()
	if err := get(ctx, "/"); err != nil {
		t.Fatal(err)
	}
	parent.End()
	wg.Wait()
	spans := waitSpans(rec)
	if len(spans) != 1 || spans[0].Parent().SpanID() != parent.SpanContext().SpanID() {
		t.Fatalf("wait spans %v; want one under the request's span", spans)
	}
}

// inUse and waiting sum the connections in use and the callers waiting
// over the transport's origins.
func inUse(tr *shoalhttp.Transport) int {
	n := 0
	for _, s := range tr.Stats() {
		n += s.InUseConns
	}
	return n
}

func waiting(tr *shoalhttp.Transport) int {
	n := 0
	for _, s := range tr.Stats() {
		n += s.Waiting
	}
	return n
}
