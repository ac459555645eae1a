package shoalprom_test

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// fakeConn is the trivial connection the test pools hold.
type fakeConn struct{ id int64 }

// fakeDial hands out numbered fakeConns and never fails.
func fakeDial() func(context.Context) (*fakeConn, error) {
	var n atomic.Int64
	return func(context.Context) (*fakeConn, error) {
		return &fakeConn{id: n.Add(1)}, nil
	}
}

// The known sequence's parameters.
const (
	seqMaxConns      = 2
	seqMinIdle       = 1
	seqHeldWait      = 50 * time.Millisecond // how long the waiter waits at least
	seqTimeout       = 20 * time.Millisecond // the timed-out acquire's deadline
	seqLeakThreshold = time.Second           // far above every other lease, even on a loaded machine
)

// runSequence builds a pool watched by obs and runs the known sequence on
// it: 3 acquires, one of which waits at least seqHeldWait; 1 acquire that
// times out; 1 lease held past LeakThreshold (still held on return). At the
// end 2 connections are open, 1 idle and 1 used by the leaked lease, which
// the returned cleanup releases before closing the pool.
func runSequence(t *testing.T, obs shoal.Observer, attach func(*shoal.Pool[*fakeConn]), leakObserved func() bool) (pool *shoal.Pool[*fakeConn], cleanup func()) {
	t.Helper()
	ctx := context.Background()
	pool, err := shoal.New(shoal.Config[*fakeConn]{
		Dial:          fakeDial(),
		MaxConns:      seqMaxConns,
		MinIdle:       seqMinIdle,
		LeakThreshold: seqLeakThreshold,
		Observer:      obs,
	})
	if err != nil {
		t.Fatal(err)
	}
	attach(pool)
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

	// Acquire 3 waits until first is released, at least seqHeldWait later.
	got := make(chan *shoal.Lease[*fakeConn])
	go func() {
		l, err := pool.Acquire(ctx)
		if err != nil {
			t.Error(err)
		}
		got <- l
	}()
	waitFor(t, "the third acquire to wait", func() bool { return pool.Stats().Waiting == 1 })
	time.Sleep(seqHeldWait)
	first.Release()
	third := <-got
	if third == nil {
		t.FailNow()
	}

	// With both connections leased, an acquire with a deadline times out.
	tctx, cancel := context.WithTimeout(ctx, seqTimeout)
	_, err = pool.Acquire(tctx)
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire with a %s deadline on a full pool: got %v, want a deadline error", seqTimeout, err)
	}
	third.Release()

	// keeper stays held past LeakThreshold.
	waitFor(t, "the leak to be reported", func() bool {
		leaked := pool.Stats().Leaked
		if leaked > 1 {
			t.Fatalf("%d leases reported as leaked, want only the one held past LeakThreshold (%s)", leaked, seqLeakThreshold)
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

// waitFor polls cond until it holds, failing the test after 10s.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}
