package shoalotel_test

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/poolmetrics/metricstest"
	"github.com/shoalpool/shoal/shoalotel"
	"go.opentelemetry.io/otel/codes"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
)

// TestWaitSpanErrorTypes: a wait span of an acquire that failed while it
// waited says why in error.type, each cause the package doc names, with
// an error status: the caller's context canceled, the pool closed, load
// shedding (exhausted), and the dial the caller waited for failing. Run
// in a bubble: the waits are the pool's clock, not the machine's.
func TestWaitSpanErrorTypes(t *testing.T) {
	for _, c := range []struct {
		want string
		cfg  func(*shoal.Config[*conn])
		// fail makes the acquire that waits on pool fail, cancel ending
		// its context; nothing for a cause that comes as time passes.
		fail func(pool *shoal.Pool[*conn], cancel context.CancelFunc)
	}{
		{"canceled", nil, func(_ *shoal.Pool[*conn], cancel context.CancelFunc) { cancel() }},
		{"closed", nil, func(pool *shoal.Pool[*conn], _ context.CancelFunc) {
			go pool.Close(context.Background()) // returns once the held lease is released
		}},
		{"exhausted", func(c *shoal.Config[*conn]) {
			c.QueueTarget, c.QueueInterval = 10*time.Millisecond, 50*time.Millisecond
		}, nil}, // the waiter is shed as time passes
		{"dial", func(c *shoal.Config[*conn]) {
			c.Dial = func(ctx context.Context) (*conn, error) {
				time.Sleep(10 * time.Millisecond)
				return nil, errors.New("connection refused")
			}
		}, nil}, // the dial fails as time passes
	} {
		t.Run(c.want, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				rec := tracetest.NewSpanRecorder()
				tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
				defer tp.Shutdown(context.Background())
				mp := sdkmetric.NewMeterProvider(sdkmetric.WithReader(sdkmetric.NewManualReader()))
				defer mp.Shutdown(context.Background())
				m, err := shoalotel.New(mp, shoalotel.WithWaitSpans(tp, 0))
				if err != nil {
					t.Fatal(err)
				}
				obs, err := m.Pool("orders")
				if err != nil {
					t.Fatal(err)
				}
				cfg := shoal.Config[*conn]{Dial: metricstest.FakeDial(), MaxConns: 1, Observer: obs}
				if c.cfg != nil {
					c.cfg(&cfg)
				}
				pool, err := shoal.New(cfg)
				if err != nil {
					t.Fatal(err)
				}
				defer pool.Close(context.Background())
				var held shoal.Lease[*conn]
				if c.want != "dial" {
					if held, err = pool.Acquire(context.Background()); err != nil {
						t.Fatal(err)
					}
				}
				ctx, span := tp.Tracer("test").Start(context.Background(), "request")
				ctx, cancel := context.WithTimeout(ctx, time.Hour)
				defer cancel()
				done := make(chan error, 1)
				go func() {
					_, err := pool.Acquire(ctx)
					done <- err
				}()
				synctest.Wait() // the acquire waits in the queue
				if n := pool.Stats().Waiting; n != 1 {
					t.Fatalf("%d callers waiting, want the one acquire", n)
				}
				if c.fail != nil {
					c.fail(pool, cancel)
				}
				if err := <-done; err == nil {
					t.Fatal("the waiting acquire succeeded")
				}
				span.End()
				if held.Value() != nil {
					held.Release()
				}

				spans := waitSpans(rec)
				if len(spans) != 1 {
					t.Fatalf("%d wait spans, want 1", len(spans))
				}
				s := spans[0]
				if got := attr(s, shoalotel.AttrErrorType); got != c.want || s.Status().Code != codes.Error {
					t.Errorf("the failed acquire's span: error.type %q, status %v; want %q and an error", got, s.Status(), c.want)
				}
			})
		})
	}
}
