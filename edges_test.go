package shoal

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// TestWaiterRejoiningSeesIdleConnection: a waiter handed a connection that
// reach it, even though the dial for a replacement never ends.
func TestWaiterRejoiningSeesIdleConnection(t *testing.T) {
	var rejected atomic.Pointer[fakeConn]
	checking, resume := make(chan struct{}), make(chan struct{})
	var dials atomic.Int32
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 2,
		Dial: func(ctx context.Context) (*fakeConn, error) {
			if n := dials.Add(1); n <= 2 {
				return &fakeConn{id: int(n)}, nil
			}
			<-ctx.Done() // the replacement's dial hangs until the pool closes
			return nil, ctx.Err()
		},
		Hooks: Hooks[*fakeConn]{BeforeAcquire: func(_ context.Context, c *fakeConn) bool {
			if rejected.Load() == c {
				close(checking)
				<-resume
				return false
			}
			return true
		}}})
	first, second := mustAcquire(t, p), mustAcquire(t, p)
	rejected.Store(first.Value())
	got := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		l, err := p.Acquire(ctx)
		if err == nil {
			l.Release()
		}
		got <- err
	}()
	waitForWaiters(t, p, 1)
	first.Release() // handed to the waiter, whose check now blocks
	<-checking
	second.Release() // nobody is queued at this instant: it goes idle
	close(resume)
	if err := <-got; err != nil {
		t.Fatalf("the waiter failed while a connection sat idle: %v (stats %+v)", err, p.Stats())
	}
}
