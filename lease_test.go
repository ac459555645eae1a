package shoal

import (
	"errors"
	"fmt"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// A Lease kept after its Release must not reach the connection's next
// holder: a stale Release, Discard or Hijack leaves the new hand-out alone,
// in both modes. Before leases carried their hand-out's generation, the
// stale call ended the new holder's lease and two callers shared one
// exclusive connection.
func TestStaleLeaseCallsLeaveTheNewHolder(t *testing.T) {
	stale := map[string]func(l Lease[*fakeConn]){
		"Release": func(l Lease[*fakeConn]) { l.Release() },
		"Discard": func(l Lease[*fakeConn]) { l.Discard() },
		"Hijack": func(l Lease[*fakeConn]) {
			if _, err := l.Hijack(); !errors.Is(err, ErrLeaseReleased) {
				t.Errorf("stale Hijack: %v, want ErrLeaseReleased", err)
			}
		},
	}
	for _, streams := range []int{1, 2} {
		for name, call := range stale {
			t.Run(fmt.Sprintf("%s/streams=%d", name, streams), func(t *testing.T) {
				p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 1, MaxStreams: streams})
				first := mustAcquire(t, p)
				first.Release()
				second := mustAcquire(t, p) // the same connection (stream), handed out again
				if second.Value() != first.Value() {
					t.Fatalf("want the same connection handed out again")
				}
				call(first)
				if s := p.Stats(); s.Leases != 1 || s.Closed != 0 {
					t.Fatalf("after a stale %s: %d leases, %d closed; want the new holder's lease alone, open (stats %+v)",
						name, s.Leases, s.Closed, s)
				}
				// Only the new holder's stream is taken: the connection's
				// other streams are free, and no more.
				var others []Lease[*fakeConn]
				for {
					l, err := p.TryAcquire()
					if err != nil {
						break
					}
					others = append(others, l)
				}
				if len(others) != streams-1 {
					t.Errorf("after a stale %s %d more leases were free, want %d", name, len(others), streams-1)
				}
				for _, l := range others {
					l.Release()
				}
				second.Release()
				second.Release() // stale now too: nothing
				if d.openConns() != 1 {
					t.Errorf("%d connections open, want 1", d.openConns())
				}
			})
		}
	}
}

// The zero Lease holds nothing: its methods do nothing and Hijack says so.
func TestZeroLease(t *testing.T) {
	var l Lease[*fakeConn]
	l.Release()
	l.Discard()
	l.Retire()
	l.SetStreamLimit(1)
	if l.Value() != nil || l.HeldFor() != 0 || l.Err() != nil {
		t.Errorf("zero Lease: Value %v, HeldFor %v, Err %v", l.Value(), l.HeldFor(), l.Err())
	}
	if _, err := l.Hijack(); !errors.Is(err, ErrLeaseReleased) {
		t.Errorf("zero Lease Hijack: %v, want ErrLeaseReleased", err)
	}
}

// heldObserver keeps the last hold time a release reported.
type heldObserver struct {
	BaseObserver
	held atomic.Int64
}

func (o *heldObserver) ObserveRelease(h time.Duration) { o.held.Store(int64(h)) }

// TestHijackReportsHoldTime: a hijacked lease reports how long it was held,
// as a release does.
func TestHijackReportsHoldTime(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		o := &heldObserver{}
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 1, Observer: o})
		const hold = 10 * time.Millisecond
		l := mustAcquire(t, p)
		time.Sleep(hold)
		c, err := l.Hijack()
		if err != nil {
			t.Fatal(err)
		}
		d.close(c)
		if h := time.Duration(o.held.Load()); h != hold {
			t.Errorf("Hijack reported a hold of %v, want the %v it was held", h, hold)
		}
	})
}

func TestDiscardForReportsTheAdaptersReason(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, streams := range []int{1, 4} {
			var why reasons
			p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 2, MaxStreams: streams, Hooks: Hooks[*fakeConn]{OnDisconnect: why.hook}})
			for _, r := range []Reason{ReasonHealth, ReasonRejected, ReasonResized, ReasonLifetime} {
				l := mustAcquire(t, p)
				l.DiscardFor(r)
				l.DiscardFor(r) // a second call on the same hand-out does nothing
			}
			synctest.Wait()
			if why.count(ReasonHealth) != 1 || why.count(ReasonRejected) != 1 || why.count(ReasonDiscarded) != 2 {
				t.Fatalf("MaxStreams %d: reasons %v, want health, rejected and two discarded", streams, why.list)
			}
			if s := p.Stats(); s.Closed != 4 || s.TotalConns != 0 {
				t.Fatalf("MaxStreams %d: %+v, want the 4 closed", streams, s)
			}
		}
	})
}
