package shoal

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"
)

// sweepGroup returns a group of n keys' pools, exclusive, each with one
// connection open and idle, and every other one with a lease held, so that
// a sweep or an eviction finds both kinds. IdleTimeout is an hour: the
// benchmark's sweeps look at every pool and close none. With budget, the
// pools share a LocalBudget, whose lock a pool's Stats takes (a sweep's
// idle check does not). maxPools is the group's MaxPools.
func sweepGroup(b *testing.B, n int, budget bool, maxPools int) (*Group[string, *fakeConn], func()) {
	b.Helper()
	ts := newTenants(0)
	cfg := GroupConfig[string, *fakeConn]{Config: ts.config, IdleTimeout: time.Hour, MaxPools: maxPools}
	if budget {
		cfg.Budget = mustBudget(b, 4*n+4)
	}
	g, err := NewGroup(cfg)
	if err != nil {
		b.Fatal(err)
	}
	ctx := context.Background()
	var held []Lease[*fakeConn]
	for i := range n {
		l, err := g.Acquire(ctx, fmt.Sprintf("tenant-%05d", i))
		if err != nil {
			b.Fatal(err)
		}
		if i%2 == 0 {
			l.Release()
		} else {
			held = append(held, l)
		}
	}
	return g, func() {
		for _, l := range held {
			l.Release()
		}
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := g.Close(ctx); err != nil {
			b.Error(err)
		}
	}
}

// BenchmarkGroupSweep times one idle sweep of a group (keyed.Set.Sweep),
// which holds the group's lock for its two walks of the map and asks each
// pool outside it. ns/pool is the cost of looking at one pool.
func BenchmarkGroupSweep(b *testing.B) {
	for _, budget := range []bool{false, true} {
		for _, n := range []int{1000, 10000} {
			if budget && n > 1000 {
				// Each join to a LocalBudget divides it among every
				// member, so 10,000 pools take tens of seconds to set
				// up; 1,000 show what its lock costs.
				continue
			}
			b.Run(fmt.Sprintf("budget=%v/pools=%d", budget, n), func(b *testing.B) {
				g, done := sweepGroup(b, n, budget, 0)
				defer done()
				b.ResetTimer()
				for b.Loop() {
					g.set.Sweep(time.Now())
				}
				b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/pool")
				if g.Len() != n {
					b.Fatalf("the sweep closed pools: %d left of %d", g.Len(), n)
				}
			})
		}
	}
}

// BenchmarkGroupAcquireDuringSweeps times an Acquire and Release of one
// key while another goroutine sweeps the group without pause, against the
// same without sweeps: an acquire that finds the lock held waits for the
// rest of that walk of the sweep's. max-ns and p999-ns (of the first
// million) show that wait.
func BenchmarkGroupAcquireDuringSweeps(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		for _, sweeping := range []bool{false, true} {
			b.Run(fmt.Sprintf("pools=%d/sweeping=%v", n, sweeping), func(b *testing.B) {
				g, done := sweepGroup(b, n, false, 0)
				defer done()
				ctx := context.Background()
				var wg sync.WaitGroup
				stop := make(chan struct{})
				if sweeping {
					wg.Go(func() {
						for {
							select {
							case <-stop:
								return
							default:
							}
							g.set.Sweep(time.Now())
						}
					})
				}
				timeAcquires(b, ctx, g, "tenant-00000")
				close(stop)
				wg.Wait()
			})
		}
	}
}

// timeAcquires is the timed loop of the benchmarks above: an Acquire and
// Release of key, each timed, with the slowest and the 99.9th percentile
// (of the first million) reported beside the mean. The timer stops on
// return, before the caller stops its goroutine.
func timeAcquires(b *testing.B, ctx context.Context, g *Group[string, *fakeConn], key string) {
	lat := make([]time.Duration, 0, 1<<20)
	var most time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		l, err := g.Acquire(ctx, key)
		if err != nil {
			b.Fatal(err)
		}
		l.Release()
		d := time.Since(start)
		most = max(most, d)
		if len(lat) < cap(lat) {
			lat = append(lat, d)
		}
	}
	b.StopTimer()
	slices.Sort(lat)
	b.ReportMetric(float64(lat[len(lat)*999/1000]), "p999-ns")
	b.ReportMetric(float64(most), "max-ns")
}
