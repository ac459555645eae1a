package shoal

import (
	"context"
	"testing"
	"time"
)

// These benchmarks measure the core alone, for quick iteration on the hot
// path. The side-by-side comparison with other pools lives in bench/.

func benchPool(b *testing.B, cfg Config[*fakeConn]) *Pool[*fakeConn] {
	p, _ := newTestPool(b, cfg)
	var leases []Lease[*fakeConn]
	for i := 0; i < cfg.MaxConns; i++ {
		leases = append(leases, mustAcquire(b, p))
	}
	for _, l := range leases {
		l.Release()
	}
	return p
}

// serialLoop acquires and releases on one goroutine.
func serialLoop(b *testing.B, p *Pool[*fakeConn]) {
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

// parallelLoop acquires and releases on 256 goroutines (2 cores).
func parallelLoop(b *testing.B, p *Pool[*fakeConn]) {
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

func BenchmarkAcquireReleaseSerial(b *testing.B) {
	serialLoop(b, benchPool(b, Config[*fakeConn]{MaxConns: 8}))
}

func BenchmarkAcquireReleaseParallel(b *testing.B) {
	parallelLoop(b, benchPool(b, Config[*fakeConn]{MaxConns: 8}))
}

// BenchmarkAcquireReleaseChecked is the exclusive path off the plain fast
// path: a lifetime makes every acquire check the connection and every
// release read the clock, through the engine interface (engine.go).
func BenchmarkAcquireReleaseChecked(b *testing.B) {
	serialLoop(b, benchPool(b, Config[*fakeConn]{MaxConns: 8, MaxLifetime: time.Hour}))
}

// BenchmarkAcquireReleaseMultiplexed is the multiplexed engine's path: 256
// goroutines on 2 connections of 4 streams.
func BenchmarkAcquireReleaseMultiplexed(b *testing.B) {
	parallelLoop(b, benchPool(b, Config[*fakeConn]{MaxConns: 2, MaxStreams: 4}))
}

// BenchmarkAcquireReleaseMultiplexedChecked is one caller on the
// multiplexed engine with a lifetime and an idle timeout, as shoalpgx's
// shared connections have: every take checks the lifetime, and every
// release checks it and, its connection going idle, notes when.
func BenchmarkAcquireReleaseMultiplexedChecked(b *testing.B) {
	serialLoop(b, benchPool(b, Config[*fakeConn]{MaxConns: 2, MaxStreams: 4, MaxLifetime: time.Hour, MaxIdleTime: time.Hour}))
}

// BenchmarkCallersGoAway is the workload barging does not suit: every
// caller holds its connection for a short wait (standing in for a round
// trip), releases it and goes on to other work (a longer wait) before it
// comes back, while others wait for connections. A barging release leaves
// its connection idle for a releaser that is not coming; the barging timer
// hands it over, and the miss suspends barging (barge.go). Compare
// strict-fifo, barge-4ms and barge-4ms-no-suspend: ns/op is per acquire,
// wait-µs the mean wait of the acquires that waited. (time.Sleep lasts
// about a millisecond here however short it is asked to be, the idle
// process's timer granularity; the shape is what matters.) Measured on the
// project's 2-core machine, 2000x, two runs: 588-595 µs/op and a 2.3 ms
// mean wait strict, 581 µs and 2.4 ms barging, 651-655 µs and 4.6 ms
// barging without the suspension.
func BenchmarkCallersGoAway(b *testing.B) {
	cases := []struct {
		name      string
		after     time.Duration
		noSuspend bool
	}{
		{"strict-fifo", 0, false},
		{"barge-4ms", 4 * time.Millisecond, false},
		{"barge-4ms-no-suspend", 4 * time.Millisecond, true},
	}
	for _, c := range cases {
		b.Run(c.name, func(b *testing.B) {
			p := benchPool(b, Config[*fakeConn]{MaxConns: 2, BargeWindow: c.after})
			if c.noSuspend {
				p.ex.barge.suspend = 0
			}
			ctx := context.Background()
			b.SetParallelism(4) // 8 callers on 2 cores, for 2 connections
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					l, err := p.Acquire(ctx)
					if err != nil {
						b.Error(err)
						return
					}
					time.Sleep(50 * time.Microsecond)
					l.Release()
					time.Sleep(200 * time.Microsecond)
				}
			})
			s := p.Stats()
			if s.WaitedAcquires > 0 {
				b.ReportMetric(float64(s.WaitTime.Microseconds())/float64(s.WaitedAcquires), "wait-µs")
			}
		})
	}
}
