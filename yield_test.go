package shoal

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// TestYieldAfterHandoffJudgesHoldTime: a release that hands its lease to a
// waiter yields when the lease was held only briefly since its own
// hand-over (CPU work), or when that is unknown, and does not when it was
// held across what must have been I/O. A barging pool always yields.
func TestYieldAfterHandoffJudgesHoldTime(t *testing.T) {
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1})
	mustAcquire(t, p).Release() // dialled for a waiter: that lease was handed over
	h := mustAcquire(t, p)
	defer h.Release()
	l := h.rec
	if l.handedAt != 0 {
		t.Fatalf("a lease from the idle stack has handedAt %d, want 0", l.handedAt)
	}
	if !p.ex.yieldAfterHandOff(l) {
		t.Errorf("no stamp: want a yield (the behaviour before stamps)")
	}
	if l.handedAt == 0 {
		t.Fatalf("yieldAfterHandOff did not stamp the lease")
	}
	l.handedAt = p.now() - int64(time.Microsecond)
	if !p.ex.yieldAfterHandOff(l) {
		t.Errorf("held 1us: want a yield")
	}
	l.handedAt = p.now() - int64(time.Millisecond)
	if p.ex.yieldAfterHandOff(l) {
		t.Errorf("held 1ms: want no yield")
	}

	b, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, BargeWindow: time.Millisecond})
	lb := mustAcquire(t, b)
	defer lb.Release()
	lb.rec.handedAt = b.now() - int64(time.Second)
	if !b.ex.yieldAfterHandOff(lb.rec) {
		t.Errorf("barging pool, held 1s: want a yield")
	}
}

// TestHandoffStampsTheLease: a lease handed to a waiter carries the time of
// the hand-over; the next acquire from the idle stack clears it.
func TestHandoffStampsTheLease(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1})
		held := mustAcquire(t, p)
		got := make(chan Lease[*fakeConn])
		go func() {
			l, err := p.Acquire(context.Background())
			if err != nil {
				t.Error(err)
			}
			got <- l
		}()
		wantWaiters(t, p, 1)
		before := p.now()
		held.Release()
		l := <-got
		if l.rec.handedAt < before {
			l.Release()
			t.Fatalf("handed-over lease has handedAt %d, want at least %d", l.rec.handedAt, before)
		}
		l.Release()
		l = mustAcquire(t, p)
		defer l.Release()
		if l.rec.handedAt != 0 {
			t.Errorf("lease from the idle stack has handedAt %d, want 0", l.rec.handedAt)
		}
	})
}
