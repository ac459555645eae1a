package shoal

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// An idle connection closes at maintenance's next pass after its lifetime
// ends, with nobody acquiring: within half of MaxLifetime and a second at
// most (docs/from-pgxpool.md, where pgxpool waits for the next acquire or
// HealthCheckPeriod).
func TestIdleConnectionClosesSoonAfterItsLifetime(t *testing.T) {
	for _, life := range []time.Duration{40 * time.Millisecond, time.Hour} {
		t.Run(life.String(), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				closed := make(chan time.Time, 1)
				p, _ := newTestPool(t, Config[*fakeConn]{
					MaxConns: 1, MaxLifetime: life,
					Hooks: Hooks[*fakeConn]{OnDisconnect: func(_ *fakeConn, why Reason) {
						if why == ReasonLifetime {
							closed <- time.Now()
						}
					}},
				})
				// Out of step with maintenance's passes, which began at New.
				time.Sleep(7 * time.Millisecond)
				dialled := time.Now()
				mustAcquire(t, p).Release()
				var at time.Time
				select {
				case at = <-closed:
				case <-time.After(2 * life):
					t.Fatalf("the idle connection still open %s after its dial, with a lifetime of %s", 2*life, life)
				}
				late, bound := at.Sub(dialled)-life, min(life/2, time.Second)
				if late < 0 || late > bound {
					t.Errorf("closed %s after its lifetime ended, want within %s", late, bound)
				}
				_ = p.Close(context.Background())
			})
		})
	}
}
