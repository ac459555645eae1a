package shoal

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A Close that blocks must not hold up the goroutine that let the
// connection go: Discard, a failed check, a release the pool refuses. Pool.Close
// waits for it, and the connection's place is not free until it returns.
func TestSlowCloseRunsOffTheCallersGoroutine(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		unblock := make(chan struct{})
		closing := make(chan struct{}, 8)
		d := &fakeDialer{}
		p, err := New(Config[*fakeConn]{
			MaxConns: 1,
			Dial:     d.dial,
			Close: func(c *fakeConn) error {
				closing <- struct{}{}
				<-unblock
				return d.close(c)
			},
		})
		if err != nil {
			t.Fatal(err)
		}
		l := mustAcquire(t, p)
		returned := make(chan struct{})
		go func() {
			l.Discard()
			close(returned)
		}()
		select {
		case <-returned:
		case <-time.After(10 * time.Second):
			t.Fatal("Discard waited for a Close that blocks")
		}
		<-closing // the close is under way, on its own goroutine
		if s := p.Stats(); s.Closing != 1 || s.TotalConns != 0 {
			t.Fatalf("while the close runs: %+v, want 1 closing and none open", s)
		}
		// Its place in MaxConns is still taken: nothing new is dialled yet.
		ctx, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
		_, err = p.Acquire(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) || d.dials.Load() != 1 {
			t.Fatalf("acquire while the only place is closing: %v after %d dials; want a timeout and no new dial", err, d.dials.Load())
		}

		closed := make(chan error, 1)
		go func() { closed <- p.Close(context.Background()) }()
		synctest.Wait() // Close waits, or has returned
		select {
		case err := <-closed:
			t.Fatalf("Close returned (%v) before the connection's Close did", err)
		default:
		}
		close(unblock)
		if err := <-closed; err != nil {
			t.Fatal(err)
		}
		if d.closes.Load() != 1 {
			t.Fatalf("%d closes, want 1", d.closes.Load())
		}
		if s := p.Stats(); s.Closing != 0 || s.Closed != 1 {
			t.Fatalf("after Close: %+v", s)
		}
	})
}

// Right after an acquire that a dial served, the new connection counts once:
// in use, not also dialling.
func TestDialledConnectionCountsOnceInStats(t *testing.T) {
	for i := range 30 {
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1})
		l := mustAcquire(t, p)
		if s := p.Stats(); s.TotalConns+s.Dialing != 1 || s.InUseConns != 1 {
			t.Fatalf("try %d: after the first acquire %+v; want 1 in use and no dial", i, s)
		}
		l.Release()
	}
}
