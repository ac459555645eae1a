package shoal

import (
	"context"
	"testing"
)

// These benchmarks measure the core alone, for quick iteration on the hot
// path. The side-by-side comparison with other pools lives in bench/.

func benchPool(b *testing.B, cfg Config[*fakeConn]) *Pool[*fakeConn] {
	p, _ := newTestPool(b, cfg)
	var leases []*Lease[*fakeConn]
	for i := 0; i < cfg.MaxConns; i++ {
		leases = append(leases, mustAcquire(b, p))
	}
	for _, l := range leases {
		l.Release()
	}
	return p
}

func BenchmarkAcquireReleaseSerial(b *testing.B) {
	p := benchPool(b, Config[*fakeConn]{MaxConns: 8})
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

func BenchmarkAcquireReleaseParallel(b *testing.B) {
	p := benchPool(b, Config[*fakeConn]{MaxConns: 8})
	ctx := context.Background()
	b.ReportAllocs()
	b.SetParallelism(128) // 256 goroutines on 2 cores
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
