package shoal

import (
	"context"
	"fmt"
	"testing"
	"time"
)

// BenchmarkLocalBudgetJoinLeave times joining n exclusive pools (MinConns
// 0, on fake connections) to one LocalBudget, one New after another, and
// closing them one after another, each Close returning once the pool has
// left the budget: ns/join and ns/leave are the cost of one pool's join
// and leave among n. A budget smaller than n (64) shares its connections
// out as headroom among a few pools; one of n spreads them over all.
func BenchmarkLocalBudgetJoinLeave(b *testing.B) {
	for _, n := range []int{100, 1000, 10000} {
		for _, size := range []int{64, n} {
			b.Run(fmt.Sprintf("pools=%d/size=%d", n, size), func(b *testing.B) {
				var join, leave time.Duration
				for b.Loop() {
					budget := mustBudget(b, size)
					d := &fakeDialer{}
					pools := make([]*Pool[*fakeConn], n)
					start := time.Now()
					for i := range pools {
						p, err := New(Config[*fakeConn]{Dial: d.dial, Close: d.close, MaxConns: 4, Budget: budget})
						if err != nil {
							b.Fatal(err)
						}
						pools[i] = p
					}
					join += time.Since(start)
					start = time.Now()
					for _, p := range pools {
						ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
						err := p.Close(ctx)
						cancel()
						if err != nil {
							b.Fatal(err)
						}
					}
					leave += time.Since(start)
					if m := budget.Members(); m != 0 {
						b.Fatalf("%d pools still joined after every Close", m)
					}
				}
				b.ReportMetric(float64(join.Nanoseconds())/float64(b.N)/float64(n), "ns/join")
				b.ReportMetric(float64(leave.Nanoseconds())/float64(b.N)/float64(n), "ns/leave")
			})
		}
	}
}

// BenchmarkLocalBudgetIdlePass times one pass of a LocalBudget's sampler
// (sample every pool, divide, push the shares that changed) over n idle
// exclusive pools under a budget of 64: the cost a process with n tenants
// pays every 50ms while nothing happens. The budget's own sampler runs
// beside the timed passes, one pass in 50ms.
func BenchmarkLocalBudgetIdlePass(b *testing.B) {
	for _, n := range []int{1000, 10000} {
		b.Run(fmt.Sprintf("pools=%d", n), func(b *testing.B) {
			budget := mustBudget(b, 64)
			d := &fakeDialer{}
			pools := make([]*Pool[*fakeConn], n)
			for i := range pools {
				p, err := New(Config[*fakeConn]{Dial: d.dial, Close: d.close, MaxConns: 4, Budget: budget})
				if err != nil {
					b.Fatal(err)
				}
				pools[i] = p
			}
			defer func() {
				for _, p := range pools {
					p.Close(context.Background())
				}
			}()
			for b.Loop() {
				budget.sample(time.Now(), true)
				budget.pushShares()
			}
		})
	}
}
