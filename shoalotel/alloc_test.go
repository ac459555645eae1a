package shoalotel_test

import (
	"testing"

	"github.com/shoalpool/shoal/internal/poolmetrics/metricstest"
)

func BenchmarkObserver(b *testing.B) { metricstest.BenchObserver(b, backend) }

// BenchmarkObserverParallel is the contended case: every core records
// into the same pool's histogram.
func BenchmarkObserverParallel(b *testing.B) { metricstest.BenchObserverParallel(b, backend) }

// BenchmarkAcquireRelease is the serial acquire+release of one connection
// with no observer and with these metrics, side by side: the observer's
// share of the hot path (one wait_time and one use_time record per cycle).
func BenchmarkAcquireRelease(b *testing.B) { metricstest.BenchAcquireRelease(b, backend) }
