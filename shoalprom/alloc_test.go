package shoalprom_test

import (
	"context"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/poolmetrics/metricstest"
	"github.com/shoalpool/shoal/shoalprom"
)

func BenchmarkObserver(b *testing.B) { metricstest.BenchObserver(b, backend(shoalprom.Options{})) }

// BenchmarkObserverParallel is the contended case: every core records
// into the same pool's histogram.
func BenchmarkObserverParallel(b *testing.B) {
	metricstest.BenchObserverParallel(b, backend(shoalprom.Options{}))
}

// BenchmarkAcquireRelease is the serial acquire+release of one connection
// with no observer and with these metrics, side by side: the observer's
// share of the hot path (one wait_time and one use_time record per cycle).
func BenchmarkAcquireRelease(b *testing.B) {
	metricstest.BenchAcquireRelease(b, backend(shoalprom.Options{}))
}

func BenchmarkScrape(b *testing.B) {
	reg := prometheus.NewRegistry()
	c := newCollector(b, shoalprom.Options{})
	reg.MustRegister(c)
	pool, err := shoal.New(shoal.Config[*metricstest.FakeConn]{Dial: metricstest.FakeDial(), MaxConns: 4})
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
