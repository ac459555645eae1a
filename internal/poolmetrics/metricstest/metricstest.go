// Package metricstest holds the tests shoalprom and shoalotel share: Run,
// which drives either package through a Backend and reads what it reports
// under names that read the same for both (Values), and the fixtures: a
// trivial connection type, the known sequence of pool events whose metrics
// both packages' tests check value by value, the events behind shoal's own
// metrics (RunExtras), and the Observer's calls and benchmarks.
package metricstest

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
)

// FakeConn is the trivial connection the test pools hold.
type FakeConn struct {
	ID int64 // its number, from 1 in the order FakeDial made it
}

// FakeDial hands out numbered FakeConns and never fails.
func FakeDial() func(context.Context) (*FakeConn, error) {
	var n atomic.Int64
	return func(context.Context) (*FakeConn, error) {
		return &FakeConn{ID: n.Add(1)}, nil
	}
}

// The known sequence's parameters.
const (
	SeqMaxConns      = 2
	SeqMinIdle       = 1
	SeqHeldWait      = 50 * time.Millisecond // how long the waiter waits at least
	SeqTimeout       = 20 * time.Millisecond // the timed-out acquire's deadline
	SeqLeakThreshold = time.Second           // far above every other lease, even on a loaded machine
)

// RunSequence builds a pool watched by obs and runs the known sequence on
// it: 3 acquires, one of which waits at least SeqHeldWait; 1 acquire that
// times out; 1 lease held past LeakThreshold (still held on return). At the
// end 2 connections are open, 1 idle and 1 used by the leaked lease, which
// the returned cleanup releases before closing the pool.
func RunSequence(t *testing.T, obs shoal.Observer, leakObserved func() bool) (pool *shoal.Pool[*FakeConn], cleanup func()) {
	t.Helper()
	ctx := context.Background()
	pool, err := shoal.New(shoal.Config[*FakeConn]{
		Dial:          FakeDial(),
		MaxConns:      SeqMaxConns,
		MinIdle:       SeqMinIdle,
		LeakThreshold: SeqLeakThreshold,
		Observer:      obs,
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := pool.Warm(ctx); err != nil {
		t.Fatal(err)
	}

	// Acquires 1 and 2 take both connections.
	first, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	keeper, err := pool.Acquire(ctx) // held to the end: the leak
	if err != nil {
		t.Fatal(err)
	}

	// Acquire 3 waits until first is released, at least SeqHeldWait later.
	got := acquireLater(t, pool)
	WaitFor(t, "the third acquire to wait", func() bool { return pool.Stats().Waiting == 1 })
	time.Sleep(SeqHeldWait)
	first.Release()
	third := <-got
	if third == (shoal.Lease[*FakeConn]{}) {
		t.FailNow()
	}

	// With both connections leased, an acquire with a deadline times out.
	tctx, cancel := context.WithTimeout(ctx, SeqTimeout)
	_, err = pool.Acquire(tctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire with a %s deadline on a full pool: got %v, want a deadline error", SeqTimeout, err)
	}
	third.Release()

	// keeper stays held past LeakThreshold.
	WaitFor(t, "the leak to be reported", func() bool {
		leaked := pool.Stats().Leaked
		if leaked > 1 {
			t.Fatalf("%d leases reported as leaked, want only the one held past LeakThreshold (%s)", leaked, SeqLeakThreshold)
		}
		return leaked == 1 && leakObserved()
	})

	return pool, func() {
		keeper.Release()
		cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
		defer cancel()
		if err := pool.Close(cctx); err != nil {
			t.Errorf("close: %v", err)
		}
	}
}

// WaitFor polls cond until it holds, failing the test after 10s.
func WaitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// RunExtras drives the events behind shoal's own metrics on a pool watched
// by obs: 1 failed dial, 1 rejection by MaxWaiters, 1 discarded connection,
// 1 connection closed with the pool, and 2 successful dials. It returns
// the pool's Stats after Close.
func RunExtras(t *testing.T, obs shoal.Observer) shoal.Stats {
	t.Helper()
	ctx := context.Background()
	var dials atomic.Int32
	pool, err := shoal.New(shoal.Config[*FakeConn]{
		Dial: func(context.Context) (*FakeConn, error) {
			if dials.Add(1) == 2 {
				return nil, errors.New("connection refused")
			}
			return &FakeConn{}, nil
		},
		MaxConns:   1,
		MaxWaiters: 1,
		Observer:   obs,
	})
	if err != nil {
		t.Fatal(err)
	}
	lease, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := acquireLater(t, pool)
	WaitFor(t, "a waiter", func() bool { return pool.Stats().Waiting == 1 })
	if _, err := pool.Acquire(ctx); !errors.Is(err, shoal.ErrExhausted) {
		t.Fatalf("acquire past MaxWaiters: got %v, want ErrExhausted", err)
	}
	// The connection broke; the dial for the waiter fails once, a blip
	// in a pool that was connected: the waiter, with no deadline, waits
	// for the next try after the backoff, which succeeds.
	lease.Discard()
	if l := <-got; l != (shoal.Lease[*FakeConn]{}) {
		l.Release()
	}
	if s := pool.Stats(); s.DialErrors != 1 {
		t.Fatalf("%d dial errors, want 1", s.DialErrors)
	}
	if err := pool.Close(ctx); err != nil {
		t.Fatal(err)
	}
	return pool.Stats()
}

// BenchAcquireRelease runs the serial acquire+release of one connection
// with no observer and with a pool's metrics in be, as two
// sub-benchmarks, "none" and "observer": the observer's share of the hot
// path.
func BenchAcquireRelease(b *testing.B, be Backend) {
	for _, bc := range []struct {
		name string
		obs  func(testing.TB) shoal.Observer
	}{
		{"none", func(testing.TB) shoal.Observer { return nil }},
		{"observer", func(tb testing.TB) shoal.Observer { return register(tb, be.New(tb), "alloc") }},
	} {
		b.Run(bc.name, func(b *testing.B) {
			pool, err := shoal.New(shoal.Config[*FakeConn]{Dial: FakeDial(), MaxConns: 1, Observer: bc.obs(b)})
			if err != nil {
				b.Fatal(err)
			}
			defer pool.Close(context.Background())
			ctx := context.Background()
			b.ReportAllocs()
			for b.Loop() {
				l, err := pool.Acquire(ctx)
				if err != nil {
					b.Fatal(err)
				}
				l.Release()
			}
		})
	}
}

// acquireLater acquires from pool in a goroutine and delivers the lease
// (the zero Lease if the acquire failed, which fails the test).
func acquireLater(t *testing.T, pool *shoal.Pool[*FakeConn]) <-chan shoal.Lease[*FakeConn] {
	got := make(chan shoal.Lease[*FakeConn], 1)
	go func() {
		l, err := pool.Acquire(context.Background())
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	return got
}

// HoldStreams opens a multiplexed pool of one connection with 4 streams
// watched by obs and holds n leases on it until the test ends.
func HoldStreams(t *testing.T, obs shoal.Observer, n int) {
	t.Helper()
	ctx := context.Background()
	pool, err := shoal.New(shoal.Config[*FakeConn]{Dial: FakeDial(), MaxConns: 1, MaxStreams: 4, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { pool.Close(ctx) })
	for range n {
		l, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(l.Release)
	}
}

// HandOffOnce does on a pool of one connection watched by obs what the
// core's TestBargingMissSuspendsBarging does: hold the connection, queue
// one waiter, release. With bargeWindow set the release leaves the
// connection idle for whoever asks next, nobody does, and the barging
// timer hands it to the waiter about 200µs later: one barge miss. With
// bargeWindow 0 the release hands it over: none. It fails the test when
// the pool's Stats.BargeMisses says otherwise. The pool is left open and
// idle; the test closes it.
func HandOffOnce(t *testing.T, obs shoal.Observer, bargeWindow time.Duration) *shoal.Pool[*FakeConn] {
	t.Helper()
	ctx := context.Background()
	pool, err := shoal.New(shoal.Config[*FakeConn]{Dial: FakeDial(), MaxConns: 1, BargeWindow: bargeWindow, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	held, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	got := acquireLater(t, pool)
	WaitFor(t, "the waiter", func() bool { return pool.Stats().Waiting == 1 })
	held.Release()
	l := <-got
	if l == (shoal.Lease[*FakeConn]{}) {
		t.FailNow()
	}
	l.Release()
	want := int64(0)
	if bargeWindow > 0 {
		want = 1
	}
	if got := pool.Stats().BargeMisses; got != want {
		t.Fatalf("BargeWindow %s: Stats.BargeMisses = %d after one hand-off, want %d", bargeWindow, got, want)
	}
	return pool
}
