package shoal

import (
	"context"
	"errors"
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
