package shoalprom_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/poolmetrics/metricstest"
	"github.com/shoalpool/shoal/shoalprom"
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

func newObserved(t testing.TB) *shoalprom.PoolMetrics {
	c := newCollector(t, shoalprom.Options{})
	prometheus.NewRegistry().MustRegister(c)
	m, err := c.Pool("alloc")
	if err != nil {
		t.Fatal(err)
	}
	return m
}

// TestObserverAllocatesNothing holds under the race detector too, so it
// runs there as well.
func TestObserverAllocatesNothing(t *testing.T) {
	m := newObserved(t)
	for _, c := range observerCalls(m) {
		if n := testing.AllocsPerRun(1000, c.call); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", c.name, n)
		}
	}
}

// TestPoolWithObserverAllocatesNothing checks the whole hot path, the
// pool's and the observer's together: acquire and release.
func TestPoolWithObserverAllocatesNothing(t *testing.T) {
	m := newObserved(t)
	pool, err := shoal.New(shoal.Config[*fakeConn]{Dial: fakeDial(), MaxConns: 1, Observer: m})
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
	cycle() // dial outside the measurement
	if n := testing.AllocsPerRun(1000, cycle); n != 0 {
		t.Errorf("acquire+release with a shoalprom observer: %v allocations, want 0", n)
	}
}

func BenchmarkObserver(b *testing.B) {
	m := newObserved(b)
	for _, c := range observerCalls(m) {
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
	m := newObserved(b)
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			m.ObserveAcquire(time.Millisecond)
		}
	})
}

func BenchmarkScrape(b *testing.B) {
	reg := prometheus.NewRegistry()
	c := newCollector(b, shoalprom.Options{})
	reg.MustRegister(c)
	pool, err := shoal.New(shoal.Config[*fakeConn]{Dial: fakeDial(), MaxConns: 4})
	if err != nil {
		b.Fatal(err)
	}
	defer pool.Close(context.Background())
	m, _ := c.Pool("bench")
	m.Attach(pool.Stats)
	b.ReportAllocs()
	for b.Loop() {
		if _, err := reg.Gather(); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkAcquireRelease is the serial acquire+release of one connection
// with no observer and with these metrics, side by side: the observer's
// share of the hot path (one wait_time and one use_time record per cycle).
func BenchmarkAcquireRelease(b *testing.B) {
	metricstest.BenchAcquireRelease(b, func(tb testing.TB) shoal.Observer { return newObservedObserver(tb) })
}

func newObservedObserver(tb testing.TB) shoal.Observer { return newObserved(tb) }
