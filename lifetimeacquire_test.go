package shoal

import (
	"testing"
	"testing/synctest"
	"time"
)

// An idle connection whose lifetime ended since maintenance last looked is
// not handed out: the acquire that finds it closes it and gets another,
// exclusive or multiplexed, without waiting for maintenance's next tick.
func TestLifetimeClosesWhenNextAcquired(t *testing.T) {
	for _, streams := range []int{1, 2} {
		t.Run("", func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				var why reasons
				p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 1, MaxStreams: streams, MaxLifetime: time.Minute,
					Hooks: Hooks[*fakeConn]{OnDisconnect: why.hook}})
				// Maintenance ticks every second from New: dialled half a
				// second in, the connection's lifetime ends between ticks.
				time.Sleep(500 * time.Millisecond)
				first := mustAcquire(t, p)
				old := first.Value()
				first.Release()
				time.Sleep(time.Minute + 200*time.Millisecond)
				synctest.Wait()
				if old.closed.Load() {
					t.Fatal("maintenance closed the connection between its ticks; the test needs it still idle")
				}
				l := mustAcquire(t, p)
				defer l.Release()
				if l.Value() == old {
					t.Fatalf("MaxStreams %d: acquire handed out a connection past its MaxLifetime", streams)
				}
				synctest.Wait()
				if !old.closed.Load() || why.count(ReasonLifetime) != 1 || d.dials.Load() != 2 {
					t.Errorf("MaxStreams %d: old closed %v, %d lifetime closes, %d dials; want true, 1, 2",
						streams, old.closed.Load(), why.count(ReasonLifetime), d.dials.Load())
				}
			})
		})
	}
}
