package shoal

import (
	"context"
	"fmt"
	"sync"
	"testing"
)

// BenchmarkGroupAcquireDuringEvictions times an Acquire and Release of one
// key of a group at MaxPools while another goroutine uses new keys without
// pause, each evicting an idle pool, against the same without new keys:
// an acquire that finds the group's lock held waits for the rest of what
// the eviction does under it. max-ns and p999-ns (of the first million)
// show that wait; evictions/s is how many new keys the other goroutine
// got through.
func BenchmarkGroupAcquireDuringEvictions(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, evicting := range []bool{false, true} {
			b.Run(fmt.Sprintf("pools=%d/evicting=%v", n, evicting), func(b *testing.B) {
				g, done := sweepGroup(b, n, false, n)
				defer done()
				ctx := context.Background()
				var wg sync.WaitGroup
				stop := make(chan struct{})
				evictions := 0
				if evicting {
					wg.Go(func() {
						for ; ; evictions++ {
							select {
							case <-stop:
								return
							default:
							}
							l, err := g.Acquire(ctx, fmt.Sprintf("new-%d", evictions))
							if err != nil {
								b.Error(err)
								return
							}
							l.Release()
						}
					})
				}
				timeAcquires(b, ctx, g, "tenant-00000")
				close(stop)
				wg.Wait()
				b.ReportMetric(float64(evictions)/b.Elapsed().Seconds(), "evictions/s")
			})
		}
	}
}

// BenchmarkGroupEvict times a new key's first Acquire and Release in a
// group at MaxPools, half of whose pools are leased: its eviction of the
// least recently used idle pool, and the making of its own.
func BenchmarkGroupEvict(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("pools=%d", n), func(b *testing.B) {
			g, done := sweepGroup(b, n, false, n)
			defer done()
			ctx := context.Background()
			i := 0
			for b.Loop() {
				l, err := g.Acquire(ctx, fmt.Sprintf("new-%d", i))
				if err != nil {
					b.Fatal(err)
				}
				l.Release()
				i++
			}
			if g.Len() != n {
				b.Fatalf("%d pools, want MaxPools, %d", g.Len(), n)
			}
		})
	}
}
