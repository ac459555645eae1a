package shoal_test

import (
	"context"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
)

// BenchmarkCheckoutHolders is what explaining an exhausted pool costs a
// checkout, side by side: a plain pool (a timeout then says only how many
// leases are held), one that times each hand-out and nothing else (the
// timeout and Pool.Holders give ages: the cost of leaving ages on), one
// with an Observer (which times hand-outs for its own use-time histogram
// anyway), one with a tracing Observer (a WaitTracer: each hand-out keeps
// the frames up to the code that took it, which they name) and one with a
// LeakThreshold (each hand-out's whole stack is kept: they name the code
// too). The explanation itself is built only when an acquire times out.
// Walking a stack costs by the frame, so serial runs twice: from the
// benchmark's own shallow stack, and "deep", benchDepth frames down, where
// a handler's code sits. It is in package shoal_test because the pool
// walks past its own package's frames to find the caller. Compare with
// benchstat; BENCHMARKS.md has the figures.
func BenchmarkCheckoutHolders(b *testing.B) {
	for _, c := range []struct {
		name string
		cfg  shoal.Config[int]
		// timedOnly turns the plain pool into one that times hand-outs and
		// does nothing else, which no Config asks for alone.
		timedOnly bool
	}{
		{"plain", shoal.Config[int]{}, false},
		{"timed", shoal.Config[int]{}, true},
		{"observer", shoal.Config[int]{Observer: shoal.BaseObserver{}}, false},
		{"tracing", shoal.Config[int]{Observer: tracingObserver{}}, false},
		{"leak-threshold", shoal.Config[int]{LeakThreshold: time.Hour}, false},
	} {
		pool := func(b *testing.B) *shoal.Pool[int] {
			cfg := c.cfg
			cfg.MaxConns = 8
			cfg.Dial = func(context.Context) (int, error) { return 1, nil }
			p, err := shoal.New(cfg)
			if err != nil {
				b.Fatal(err)
			}
			b.Cleanup(func() { p.Close(context.Background()) })
			if c.timedOnly {
				shoal.TimeHandOutsOnly(p)
			}
			var leases []shoal.Lease[int]
			for range cfg.MaxConns {
				l, err := p.Acquire(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				leases = append(leases, l)
			}
			for _, l := range leases {
				l.Release()
			}
			return p
		}
		b.Run("serial/"+c.name, func(b *testing.B) { checkoutLoop(b, pool(b)) })
		b.Run("deep/"+c.name, func(b *testing.B) { deepCheckoutLoop(b, pool(b), benchDepth) })
		b.Run("parallel/"+c.name, func(b *testing.B) { parallelCheckoutLoop(b, pool(b)) })
	}
}

// checkoutLoop acquires and releases on one goroutine.
func checkoutLoop(b *testing.B, p *shoal.Pool[int]) {
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		l, err := p.Acquire(ctx)
		if err != nil {
			b.Fatal(err)
		}
		l.Release()
	}
}

// benchDepth is how many frames down deepCheckoutLoop checks out: about
// where a handler's code runs under net/http and a router.
const benchDepth = 24

// deepCheckoutLoop is checkoutLoop run depth frames down the stack.
//
//go:noinline
func deepCheckoutLoop(b *testing.B, p *shoal.Pool[int], depth int) {
	if depth > 0 {
		deepCheckoutLoop(b, p, depth-1)
		return
	}
	checkoutLoop(b, p)
}

// parallelCheckoutLoop acquires and releases on 256 goroutines (2 cores).
func parallelCheckoutLoop(b *testing.B, p *shoal.Pool[int]) {
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(128)
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			l, err := p.Acquire(ctx)
			if err != nil {
				b.Fatal(err)
			}
			l.Release()
		}
	})
}
