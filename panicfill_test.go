package shoal

import (
	"context"
	"sync/atomic"
	"testing"
	"time"
)

// A Fill or an Avoid that panics (user code, called with the pool's lock
// held) is a "no", as a panicking hook is: the panic does not reach the
// caller, the lock is not left held, and every later acquire is served.
// Otherwise one panic would leave every acquire after it hanging past its
// context, on a lock nobody holds any more.
func TestFillOrAvoidThatPanicsIsANo(t *testing.T) {
	for _, field := range []string{"Fill", "Avoid"} {
		t.Run(field, func(t *testing.T) {
			var panicking atomic.Bool
			d := &fakeDialer{}
			cfg := Config[*fakeConn]{MaxConns: 1, MaxStreams: 4, Dial: d.dial, Close: d.close}
			switch field {
			case "Fill":
				cfg.Fill = func(*fakeConn, int) bool {
					if panicking.Load() {
						panic("fill exploded")
					}
					return true
				}
			case "Avoid":
				cfg.Avoid = func(*fakeConn) bool {
					if panicking.Load() {
						panic("avoid exploded")
					}
					return false
				}
			}
			p, err := New(cfg)
			if err != nil {
				t.Fatal(err)
			}
			first := mustAcquire(t, p) // the connection now carries a lease: the pool asks about it
			panicking.Store(true)

			// Each acquire runs on its own goroutine, so that one stuck on
			// the pool's lock fails the test rather than hang it; the pool
			// is then left open, since Close would wait on the lock too.
			acquire := func() (l Lease[*fakeConn], panicked any, err error) {
				type result struct {
					l   Lease[*fakeConn]
					err error
					p   any
				}
				done := make(chan result, 1)
				go func() {
					var r result
					defer func() {
						r.p = recover()
						done <- r
					}()
					ctx, cancel := context.WithTimeout(context.Background(), time.Second)
					defer cancel()
					r.l, r.err = p.Acquire(ctx)
				}()
				select {
				case r := <-done:
					return r.l, r.p, r.err
				case <-time.After(10 * time.Second):
					t.Fatalf("an acquire with a 1s deadline has not returned after 10s: %s left the pool's lock held", field)
					return
				}
			}
			for i := range 2 {
				l, panicked, err := acquire()
				if panicked != nil {
					t.Fatalf("acquire %d: %s's panic reached the caller: %v", i+1, field, panicked)
				}
				if err != nil {
					t.Fatalf("acquire %d with %s panicking: %v", i+1, field, err)
				}
				l.Release()
			}
			first.Release()
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			if s := p.Stats(); s.InUseConns != 0 || s.TotalConns != 1 {
				t.Errorf("stats after every lease came back: %+v", s)
			}
			if err := p.Close(ctx); err != nil {
				t.Fatalf("Close: %v", err)
			}
		})
	}
}
