package shoal

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestLoadSheddingDropsLongWaitersWhenOverloaded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const target, interval = 5 * time.Millisecond, 20 * time.Millisecond
		// The Observer hears the drops as rejections, as it hears MaxWaiters'
		// (shoal_pool_rejections_total counts both: docs/operating.md).
		obs := &countingObserver{}
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, QueueTarget: target, QueueInterval: interval, Observer: obs})
		held := mustAcquire(t, p)
		const n = 4
		errs := make(chan error, n)
		for i := 0; i < n; i++ {
			go func() {
				ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
				defer cancel()
				l, err := p.Acquire(ctx)
				if err == nil {
					l.Release()
				}
				errs <- err
			}()
		}
		for i := 0; i < n; i++ {
			select {
			case err := <-errs:
				if !errors.Is(err, ErrExhausted) || !strings.Contains(err.Error(), "load shedding") {
					t.Fatalf("waiter got %v, want ErrExhausted from load shedding", err)
				}
			case <-time.After(30 * time.Second):
				t.Fatal("overloaded pool kept its waiters")
			}
		}
		if s := p.Stats(); s.RejectedAcquires != n {
			t.Fatalf("RejectedAcquires = %d, want %d", s.RejectedAcquires, n)
		}
		if got := obs.rejects.Load(); got != n {
			t.Fatalf("the Observer heard %d rejections, want the %d waiters shed", got, n)
		}
		if !p.shed.shedding.Load() {
			t.Fatal("the pool shed its waiters but says it is not shedding")
		}
		held.Release()
		// With the waiters gone and acquires quick again, shedding stops
		// when the interval ends: within an interval, and a maintenance
		// tick (at most half the target while shedding) to notice.
		mustAcquire(t, p).Release()
		time.Sleep(interval + target/2)
		synctest.Wait()
		if p.shed.shedding.Load() {
			t.Fatalf("still shedding an interval after a quick acquire")
		}
	})
}

// Shedding fails the waiters that have waited twice QueueTarget, and no
// others: at the first overloaded tick, a waiter of 26ms goes and one of
// 11ms stays (target 10ms).
func TestSheddingFailsOnlyWaitersPastTwiceTheTarget(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const target, interval = 10 * time.Millisecond, 40 * time.Millisecond
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, QueueTarget: target, QueueInterval: interval})
		held := mustAcquire(t, p)
		start := time.Now()
		time.Sleep(35 * time.Millisecond)
		a := acquireLater(p, time.Minute)
		time.Sleep(15 * time.Millisecond)
		b := acquireLater(p, time.Minute)
		time.Sleep(time.Until(start.Add(61 * time.Millisecond)))
		wantShedAlone(t, p, a, "waiter that waited 25ms > 2*target")
		held.Release()
		releaseBoth(a, b)
	})
}

// wantShedAlone checks, once every goroutine in the bubble is blocked,
// that the waiter a was shed (its acquire failed) and one waiter stays.
func wantShedAlone(t *testing.T, p *Pool[*fakeConn], a <-chan Lease[*fakeConn], what string) {
	t.Helper()
	synctest.Wait()
	select {
	case l := <-a:
		if l.rec != nil {
			t.Fatal("a got a lease")
		}
	default:
		t.Errorf("%s not shed at the first overloaded tick", what)
	}
	if p.Stats().Waiting != 1 {
		t.Errorf("waiting = %d, want 1: the waiter younger than 2*target must stay", p.Stats().Waiting)
	}
}

// releaseBoth releases b's lease once it comes, and a's if it came.
func releaseBoth(a, b <-chan Lease[*fakeConn]) {
	if l := <-b; l.rec != nil {
		l.Release()
	}
	select {
	case l := <-a:
		if l.rec != nil {
			l.Release()
		}
	default:
	}
}

// A waiter handed a connection that fails its check goes back to the queue
// with its wait still counted from its Acquire: at the first overloaded
// tick it is shed like any waiter past twice QueueTarget, though a younger
// one joined the queue while it held the connection, and that one stays.
func TestSheddingCountsARejoinedWaitersWholeWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const target, interval = 10 * time.Millisecond, 40 * time.Millisecond
		var rejected atomic.Pointer[fakeConn]
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 1, QueueTarget: target, QueueInterval: interval,
			Hooks: Hooks[*fakeConn]{BeforeAcquire: func(_ context.Context, c *fakeConn) bool {
				return rejected.Load() != c
			}}})
		held := mustAcquire(t, p)
		rejected.Store(held.Value())
		block := d.blockDials() // the replacement's dial waits until the end
		start := time.Now()
		time.Sleep(35 * time.Millisecond)
		a := acquireLater(p, time.Minute)
		time.Sleep(10 * time.Millisecond)
		b := acquireLater(p, time.Minute)
		wantWaiters(t, p, 2)
		held.Release() // to a, whose check fails: it waits again, 10ms in
		wantWaiters(t, p, 2)
		time.Sleep(time.Until(start.Add(61 * time.Millisecond)))
		wantShedAlone(t, p, a, "waiter that waited 26ms > 2*target, its check failed on the way,")
		close(block)
		releaseBoth(a, b)
	})
}
