package shoal

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"testing"
	"testing/synctest"
)

func TestResetClosesOldConnections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		for _, streams := range []int{1, 3} {
			var why reasons
			p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 3, MaxStreams: streams, Hooks: Hooks[*fakeConn]{OnDisconnect: why.hook}})
			held := mustAcquire(t, p)
			idle := mustAcquire(t, p)
			idle.Release() // in multiplexed mode, a second stream on held's connection
			p.Reset()
			synctest.Wait()
			if streams == 1 && !idle.Value().closed.Load() {
				t.Fatal("idle connection survived Reset")
			}
			if held.Value().closed.Load() {
				t.Fatal("Reset closed a connection under its holder")
			}
			old := held.Value()
			held.Release()
			synctest.Wait()
			if !old.closed.Load() {
				t.Fatal("connection open before Reset kept after its release")
			}
			l := mustAcquire(t, p)
			if l.Value() == old || l.Value().closed.Load() {
				t.Fatal("acquire after Reset got an old connection")
			}
			l.Release()
			if why.count(ReasonReset) == 0 || d.openConns() != 1 {
				t.Fatalf("streams %d: reasons %v, open %d", streams, why.list, d.openConns())
			}
		}
	})
}

func TestHijack(t *testing.T) {
	p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 1})
	l := mustAcquire(t, p)
	c, err := l.Hijack()
	if err != nil {
		t.Fatal(err)
	}
	if c.closed.Load() || d.closes.Load() != 0 {
		t.Fatal("Hijack closed the connection")
	}
	if _, err := l.Hijack(); err == nil {
		t.Fatal("second Hijack succeeded")
	}
	l.Release() // a no-op
	// Its place is free: a new connection can be had.
	l2 := mustAcquire(t, p)
	if l2.Value() == c {
		t.Fatal("hijacked connection handed out again")
	}
	l2.Release()
	if s := p.Stats(); s.TotalConns != 1 || s.Acquires != 2 {
		t.Fatalf("stats %+v", s)
	}

	pm, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, MaxStreams: 2})
	a, b := mustAcquire(t, pm), mustAcquire(t, pm)
	if _, err := a.Hijack(); !errors.Is(err, ErrHijackShared) {
		t.Fatalf("hijack of a shared connection: %v", err)
	}
	b.Release()
	if _, err := a.Hijack(); err != nil {
		t.Fatal(err)
	}
	if _, err := pm.TryAcquire(); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("after hijack: %v", err)
	}
}

// resetInCheck is a pool of one connection whose BeforeAcquire, once armed,
// runs Reset and ends the acquiring caller's context while the connection
// is off the idle stacks and not held (under a take's check) or held by a
// waiter who is about to pass it on: where Reset's sweep cannot reach it.
func resetInCheck(t *testing.T) (p *Pool[*fakeConn], ctx context.Context, arm func(), why *reasons) {
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	armed := false
	why = &reasons{}
	p, _ = newTestPool(t, Config[*fakeConn]{MaxConns: 1, Hooks: Hooks[*fakeConn]{
		OnDisconnect: why.hook,
		BeforeAcquire: func(hctx context.Context, _ *fakeConn) bool {
			if armed {
				armed = false
				p.Reset()
				cancel()
			}
			return hctx.Err() == nil
		},
	}})
	return p, ctx, func() { armed = true }, why
}

// wantClosedByReset checks, once Reset has returned and everything settled,
// that old was closed for the Reset and that the next acquire dials anew.
func wantClosedByReset(t *testing.T, p *Pool[*fakeConn], old *fakeConn, why *reasons) {
	t.Helper()
	synctest.Wait()
	if s := p.Stats(); !old.closed.Load() || why.count(ReasonReset) != 1 {
		t.Fatalf("after Reset: connection closed %v, reasons %v, stats %+v; want it closed for the Reset",
			old.closed.Load(), why.list, s)
	}
	l := mustAcquire(t, p)
	if l.Value() == old {
		t.Fatal("acquire after Reset got the connection open before it")
	}
	l.Release()
}

// A connection that Reset retires while a take checks it, and that goes
// back because the caller's context ended during the check, is closed as
// it goes back, not left idle.
func TestResetDuringTakesCheckCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, ctx, arm, why := resetInCheck(t)
		l := mustAcquire(t, p)
		old := l.Value()
		l.Release()
		arm()
		if _, err := p.Acquire(ctx); !errors.Is(err, context.Canceled) {
			t.Fatalf("acquire whose context ended in the check: %v", err)
		}
		wantClosedByReset(t, p, old, why)
	})
}

// The same for a connection released to a waiter whose context ends during
// its check: the waiter passes it on, and it closes instead of going to the
// next waiter or idle.
func TestResetDuringWaitersCheckCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, ctx, arm, why := resetInCheck(t)
		l := mustAcquire(t, p)
		old := l.Value()
		first := acquireAsync(ctx, p)
		wantWaiters(t, p, 1)
		next := acquireAsync(context.Background(), p)
		wantWaiters(t, p, 2)
		arm()
		l.Release() // to the first waiter, whose check runs Reset
		if w := <-first; w.rec != nil {
			t.Fatal("the waiter whose context ended got a lease")
		}
		w := <-next
		w.Release()
		if w.Value() == old {
			t.Fatal("the next waiter got the connection open before Reset")
		}
		wantClosedByReset(t, p, old, why)
	})
}

// A connection pushed idle after a Reset swept the stacks without it (its
// putBack looked at its mark before the Reset) is closed by the push.
func TestPushAfterResetsSweepCloses(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		var why reasons
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, Hooks: Hooks[*fakeConn]{OnDisconnect: why.hook}})
		mustAcquire(t, p).Release()
		c := p.ex.popIdle() // a releaser past its look at the mark
		p.Reset()
		p.ex.push(c)
		wantClosedByReset(t, p, c.value, &why)
	})
}

// A connection whose dial was under way at a Reset is closed as it lands,
// not handed out or kept idle: it may be to the server the Reset turned
// away from (the old primary after a failover). The caller it was dialled
// for, or the floor, gets one dialled after the Reset.
func TestResetClosesAConnectionDialledBeforeIt(t *testing.T) {
	for _, streams := range []int{1, 2} {
		for _, forWaiter := range []bool{true, false} {
			t.Run(fmt.Sprintf("streams=%d/waiter=%v", streams, forWaiter), func(t *testing.T) {
				synctest.Test(t, func(t *testing.T) {
					var why reasons
					d := &fakeDialer{}
					gate, started := make(chan struct{}), make(chan struct{})
					cfg := Config[*fakeConn]{
						MaxConns:   1,
						MaxStreams: streams,
						Hooks:      Hooks[*fakeConn]{OnDisconnect: why.hook},
						Dial: func(ctx context.Context) (*fakeConn, error) {
							if d.dials.Load() == 0 {
								close(started)
								<-gate
							}
							return d.dial(ctx)
						},
					}
					if !forWaiter {
						cfg.MinConns = 1
					}
					p, _ := newTestPool(t, cfg)
					var got <-chan Lease[*fakeConn]
					if forWaiter {
						got = acquireAsync(context.Background(), p)
					}
					<-started
					p.Reset()
					close(gate)
					synctest.Wait()
					if len(d.conns) != 2 || !d.conns[0].closed.Load() || why.count(ReasonReset) != 1 {
						t.Fatalf("%d dialled; the one under way at the Reset closed: %v; reasons %v; want it closed for the Reset and another dialled",
							len(d.conns), len(d.conns) > 0 && d.conns[0].closed.Load(), why.list)
					}
					if forWaiter {
						l := <-got
						if l.Value() != d.conns[1] {
							t.Fatalf("the waiter got connection %d, want the one dialled after the Reset", l.Value().id)
						}
						l.Release()
					}
					if s := p.Stats(); s.TotalConns != 1 || s.ClosedFor(ReasonReset) != 1 {
						t.Errorf("%d open, %d closed for the Reset; want 1 and 1", s.TotalConns, s.ClosedFor(ReasonReset))
					}
				})
			})
		}
	}
}

// Resets racing the dials that refill the floor: once everything has
// settled, every connection open was dialled after the last Reset began,
// whichever of a landing dial and a Reset's sweep went first.
func TestResetRacingDialsKeepsNoConnectionDialledBeforeIt(t *testing.T) {
	for _, streams := range []int{1, 2} {
		t.Run(fmt.Sprintf("streams=%d", streams), func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				d := &fakeDialer{}
				p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 4, MinConns: 4, MaxStreams: streams,
					Dial: func(ctx context.Context) (*fakeConn, error) {
						runtime.Gosched() // a Reset may come in while the dial is under way
						return d.dial(ctx)
					}})
				done := make(chan struct{})
				go func() {
					defer close(done)
					for range 100 {
						p.Reset()
						runtime.Gosched()
					}
				}()
				<-done
				synctest.Wait()
				var open []*conn[*fakeConn]
				if streams == 1 {
					p.ex.slots.each(func(c *conn[*fakeConn]) bool {
						open = append(open, c)
						return true
					})
				} else {
					p.mx.mu.Lock()
					open = append(open, p.mx.conns...)
					p.mx.mu.Unlock()
				}
				for _, c := range open {
					if c.retiredFor() == 0 && p.dialledBeforeReset(c) {
						t.Errorf("connection %d, dialled before the last Reset, kept", c.value.id)
					}
				}
				if len(open) != 4 {
					t.Errorf("%d connections open once settled, want the floor's 4", len(open))
				}
			})
		})
	}
}
