package fairshare

import (
	"fmt"
	"testing"
	"time"
)

// BenchmarkDividePools times one division among n idle pools, as a
// LocalBudget's Join makes: ns/pool is its cost per pool.
func BenchmarkDividePools(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, size := range []int{64, n} {
			b.Run(fmt.Sprintf("pools=%d/size=%d", n, size), func(b *testing.B) {
				ps := make([]*Pool, n)
				for i := range ps {
					ps[i] = &Pool{Smooth: Smoother{Window: 2 * time.Second}}
				}
				at := time.Unix(1000, 0)
				for b.Loop() {
					DividePools(size, ps, at, 2*time.Second, 50*time.Millisecond)
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/pool")
			})
		}
	}
}
