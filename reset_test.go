package shoal

import (
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
