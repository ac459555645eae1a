package shoal

import (
	"context"
	"testing"
	"testing/synctest"
)

// TestLoweredStreamLimitHoldsWithWaiters guards Lease.SetStreamLimit's
// promise under a queue: a connection whose limit was lowered below the
// leases it carries hands no released stream to a waiter until it is back
// within the limit.
func TestLoweredStreamLimitHoldsWithWaiters(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, MaxStreams: 4})
		var held []Lease[*fakeConn]
		for range 4 {
			held = append(held, mustAcquire(t, p))
		}
		held[0].SetStreamLimit(1) // the server now allows one stream
		got := acquireAsync(context.Background(), p)
		wantWaiters(t, p, 1)
		for i, l := range held[:3] {
			l.Release()
			synctest.Wait()
			if n := p.Stats().Leases; n != 3-i {
				t.Fatalf("after %d releases the connection limited to 1 stream carries %d leases, want %d", i+1, n, 3-i)
			}
		}
		held[3].Release() // now within the limit: the waiter's turn
		l := <-got
		if l.rec == nil {
			t.Fatal("the waiter failed")
		}
		if n := p.Stats().Leases; n != 1 {
			t.Fatalf("%d leases, want 1", n)
		}
		l.Release()
	})
}
