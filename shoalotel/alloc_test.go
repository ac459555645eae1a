package shoalotel_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/poolmetrics/metricstest"
	"github.com/shoalpool/shoal/shoalotel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// observerCalls names each Observer method with a call of it.
func observerCalls(o shoal.Observer) []struct {
	name string
	call func()
} {
	dialErr := errors.New("refused")
	report := shoal.LeakReport{Held: time.Second, Function: "main.leaky", Stack: "main.leaky\n\tmain.go:1\n"}
	return []struct {
		name string
		call func()
	}{
		{"ObserveAcquire", func() { o.ObserveAcquire(3 * time.Millisecond) }},
		{"ObserveRelease", func() { o.ObserveRelease(7 * time.Millisecond) }},
		{"ObserveDial", func() { o.ObserveDial(2*time.Millisecond, nil) }},
		{"ObserveDial(err)", func() { o.ObserveDial(2*time.Millisecond, dialErr) }},
		{"ObserveClose", func() { o.ObserveClose(shoal.ReasonLifetime) }},
		{"ObserveReject", func() { o.ObserveReject() }},
		{"ObserveTimeout", func() { o.ObserveTimeout(time.Second) }},
		{"ObserveLeak", func() { o.ObserveLeak(report) }},
	}
}

// newObserved returns pool metrics on an SDK MeterProvider with a manual
// reader, collected once so that every series exists.
func newObserved(t testing.TB) (*shoalotel.PoolMetrics, *sdkmetric.ManualReader) {
	m, reader := newMetrics(t)
	p, err := m.Pool("alloc")
	if err != nil {
		t.Fatal(err)
	}
	return p, reader
}

func TestObserverAllocatesNothing(t *testing.T) {
	p, reader := newObserved(t)
	for _, c := range observerCalls(p) {
		c.call() // the first measurement of a series allocates it
		if n := testing.AllocsPerRun(1000, c.call); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", c.name, n)
		}
	}
	var rm metricdata.ResourceMetrics
	if err := reader.Collect(context.Background(), &rm); err != nil {
		t.Fatal(err)
	}
	// After a collection (which, cumulative, keeps the series) still none.
	for _, c := range observerCalls(p) {
		if n := testing.AllocsPerRun(1000, c.call); n != 0 {
			t.Errorf("%s after a collection: %v allocations per call, want 0", c.name, n)
		}
	}
}

// TestPoolWithObserverAllocatesNothing checks the whole hot path, the
// pool's and the observer's together: acquire and release.
func TestPoolWithObserverAllocatesNothing(t *testing.T) {
	p, _ := newObserved(t)
	pool, err := shoal.New(shoal.Config[*fakeConn]{Dial: fakeDial(), MaxConns: 1, Observer: p})
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close(context.Background())
	ctx := context.Background()
	cycle := func() {
		l, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		l.Release()
	}
	cycle()
	if n := testing.AllocsPerRun(1000, cycle); n != 0 {
		t.Errorf("acquire+release with a shoalotel observer: %v allocations, want 0", n)
	}
}

func BenchmarkObserver(b *testing.B) {
	p, _ := newObserved(b)
	for _, c := range observerCalls(p) {
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.call()
			}
		})
	}
}

// BenchmarkObserverParallel is the contended case: every core records
// into the same pool's histogram.
func BenchmarkObserverParallel(b *testing.B) {
	p, _ := newObserved(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			p.ObserveAcquire(time.Millisecond)
		}
	})
}

// BenchmarkAcquireRelease is the serial acquire+release of one connection
// with no observer and with these metrics, side by side: the observer's
// share of the hot path (one wait_time and one use_time record per cycle).
func BenchmarkAcquireRelease(b *testing.B) {
	metricstest.BenchAcquireRelease(b, func(tb testing.TB) shoal.Observer { return newObservedObserver(tb) })
}

func newObservedObserver(tb testing.TB) shoal.Observer {
	p, _ := newObserved(tb)
	return p
}
