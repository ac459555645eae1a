package shoalpgx

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A ping whose caller gave up goes on without it, but not for ever: with
// no PingTimeout (pgxpool's default), a server that never answers has the
// ping ended a minute after the caller left, and the connection closed,
// rather than held out of the pool until Close.
func TestAbandonedPingEndsAfterAMinute(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakePG(t)
		p := fakePool(t, f, func(c *Config) {
			c.PingTimeout = 0
			c.ShouldPing = func(context.Context, ShouldPingParams) bool { return true }
		})
		f.silent.Store(true)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		if _, err := p.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Acquire while its ping goes unanswered: %v, want its deadline's error", err)
		}
		left := time.Now()

		time.Sleep(59 * time.Second)
		synctest.Wait()
		if s := p.Stat().Shoal(); s.TotalConns != 1 || s.Closed != 0 {
			t.Fatalf("59s after its caller left: %+v, want the connection still being pinged", s)
		}
		// The minute, then the cancel request that the silent server
		// never answers (CancelTimeout) and pgx's cleanup.
		time.Sleep(time.Minute + 2*time.Second - time.Since(left))
		synctest.Wait()
		if s := p.Stat().Shoal(); s.TotalConns != 0 || s.Closed != 1 {
			t.Fatalf("62s after its caller left: %+v, want the connection closed", s)
		}
	})
}
