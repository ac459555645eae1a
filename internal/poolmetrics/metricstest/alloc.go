package metricstest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
)

// ObserverCall is one call of an Observer method, named after it.
type ObserverCall struct {
	Name string // the method, and what sets this call apart: "ObserveDial(err)"
	Call func() // calls it once, with arguments fixed in advance
}

// ObserverCalls names each Observer method with a call of it on o.
func ObserverCalls(o shoal.Observer) []ObserverCall {
	dialErr := errors.New("refused")
	report := shoal.LeakReport{Held: time.Second, Function: "main.leaky", Stack: "main.leaky\n\tmain.go:1\n"}
	return []ObserverCall{
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

// testObserverAllocatesNothing: no Observer method allocates, before a
// read and after one. The first call of each comes first: OpenTelemetry's
// SDK allocates a series at its first measurement. It holds under the
// race detector too, so it runs there as well.
func testObserverAllocatesNothing(t *testing.T, b Backend) {
	set := b.New(t)
	m := register(t, set, "alloc")
	for _, c := range ObserverCalls(m) {
		c.Call()
		if n := testing.AllocsPerRun(1000, c.Call); n != 0 {
			t.Errorf("%s: %v allocations per call, want 0", c.Name, n)
		}
	}
	set.Read(t)
	for _, c := range ObserverCalls(m) {
		if n := testing.AllocsPerRun(1000, c.Call); n != 0 {
			t.Errorf("%s after a read: %v allocations per call, want 0", c.Name, n)
		}
	}
}

// testPoolWithObserverAllocatesNothing checks the whole hot path, the
// pool's and the observer's together: acquire and release.
func testPoolWithObserverAllocatesNothing(t *testing.T, b Backend) {
	pool, err := shoal.New(shoal.Config[*FakeConn]{Dial: FakeDial(), MaxConns: 1, Observer: register(t, b.New(t), "alloc")})
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
		t.Errorf("acquire+release with the observer: %v allocations, want 0", n)
	}
}

// BenchObserver runs each Observer method of a pool's metrics in be as a
// sub-benchmark.
func BenchObserver(b *testing.B, be Backend) {
	for _, c := range ObserverCalls(register(b, be.New(b), "alloc")) {
		b.Run(c.Name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				c.Call()
			}
		})
	}
}

// BenchObserverParallel is the contended case: every core records into
// the same pool's histogram.
func BenchObserverParallel(b *testing.B, be Backend) {
	o := register(b, be.New(b), "alloc")
	b.ReportAllocs()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			o.ObserveAcquire(time.Millisecond)
		}
	})
}
