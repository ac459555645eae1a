package shoal

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// MaxDialing 0 means min(MaxConns, 4) for the MaxConns the pool has now:
// a pool made with one connection and grown by SetMaxConns serves its
// waiters with four dials at once, as one made that large would, not one
// dial after another.
func TestMaxDialingDefaultFollowsSetMaxConns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d, waiters := fullPoolWithWaiters(t, 5)
		block := d.blockDials()
		if err := p.SetMaxConns(6); err != nil {
			t.Fatal(err)
		}
		synctest.Wait()
		if got := p.Stats().Dialing; got != 4 {
			t.Errorf("after SetMaxConns(6), %d dials in flight for 5 waiters, want min(MaxConns, 4) = 4", got)
		}
		close(block)
		releaseEach(waiters)
	})
}

// The default's other bound, MaxConns, holds as well: a pool of two
// connections dials two at once for five waiters, never four.
func TestMaxDialingDefaultWithinMaxConns(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 2})
		block := d.blockDials()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		waiters := acquireMany(ctx, p, 5)
		wantWaiters(t, p, 5)
		if got := p.Stats().Dialing; got != 2 {
			t.Errorf("MaxConns 2: %d dials in flight for 5 waiters, want 2", got)
		}
		close(block)
		releaseEach(waiters)
	})
}
