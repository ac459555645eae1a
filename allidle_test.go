package shoal

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

func TestAcquireAllIdleTakesEveryIdleConnection(t *testing.T) {
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 4, Partitions: 2})
	var ls []Lease[*fakeConn]
	for range 3 {
		ls = append(ls, mustAcquire(t, p))
	}
	held := mustAcquire(t, p) // stays out: not idle
	for _, l := range ls {
		l.Release()
	}
	all := p.AcquireAllIdle()
	if len(all) != 3 {
		t.Fatalf("AcquireAllIdle took %d connections, want the 3 idle ones", len(all))
	}
	seen := map[*fakeConn]bool{held.Value(): true}
	for _, l := range all {
		if seen[l.Value()] {
			t.Fatalf("connection %d handed out twice", l.Value().id)
		}
		seen[l.Value()] = true
	}
	if s := p.Stats(); s.IdleConns != 0 || s.InUseConns != 4 {
		t.Fatalf("after AcquireAllIdle: %d idle, %d in use; want 0 and 4", s.IdleConns, s.InUseConns)
	}
	if again := p.AcquireAllIdle(); len(again) != 0 {
		t.Fatalf("second AcquireAllIdle took %d, want 0", len(again))
	}
	for _, l := range all {
		l.Release()
	}
	held.Release()
	if s := p.Stats(); s.IdleConns != 4 {
		t.Fatalf("after releasing them: %d idle, want 4", s.IdleConns)
	}
}

func TestAcquireAllIdleClosesExpiredConnections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const life = 40 * time.Millisecond
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 2, MaxLifetime: life})
		// Maintenance closes expired connections on its passes, every
		// half lifetime from New. The connection is dialled a quarter of a
		// lifetime after New, so that it expires between two passes (at
		// 5/4 of a lifetime; the passes come at 1 and 3/2), and is looked
		// at in between: AcquireAllIdle is the first to find it expired.
		time.Sleep(life / 4)
		mustAcquire(t, p).Release()
		time.Sleep(life + life/8)
		synctest.Wait()
		if s := p.Stats(); s.IdleConns != 1 || s.Closed != 0 {
			t.Fatalf("%+v; want the expired connection still idle, for AcquireAllIdle to find", s)
		}
		if all := p.AcquireAllIdle(); len(all) != 0 {
			t.Fatalf("AcquireAllIdle handed out %d expired connections", len(all))
		}
		synctest.Wait()
		if n := d.closes.Load(); n != 1 {
			t.Fatalf("%d connections closed, want the expired one", n)
		}
	})
}

func TestAcquireAllIdleOnClosedOrMultiplexedPool(t *testing.T) {
	mux, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 2, MaxStreams: 4})
	mustAcquire(t, mux).Release()
	if all := mux.AcquireAllIdle(); all != nil {
		t.Fatalf("multiplexed AcquireAllIdle returned %d leases, want nil", len(all))
	}
	p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 2})
	mustAcquire(t, p).Release()
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	if all := p.AcquireAllIdle(); all != nil {
		t.Fatalf("closed pool's AcquireAllIdle returned %d leases, want nil", len(all))
	}
}

func TestHealthCheckPeriodClosesDeadIdleConnections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const period = 20 * time.Millisecond
		var dead atomic.Pointer[fakeConn]
		var checks atomic.Int32
		p, d := newTestPool(t, Config[*fakeConn]{
			MaxConns: 3, MinConns: 3,
			HealthCheck: func(ctx context.Context, c *fakeConn) error {
				checks.Add(1)
				if idle, ok := IdleFor(ctx); !ok || idle < 5*time.Millisecond {
					t.Errorf("background check saw idle %v (ok %v), want at least HealthCheckAfter", idle, ok)
				}
				if dead.Load() == c {
					return errBoom
				}
				return nil
			},
			HealthCheckAfter:  5 * time.Millisecond,
			HealthCheckPeriod: period,
		})
		synctest.Wait()
		if s := p.Stats(); s.IdleConns != 3 {
			t.Fatalf("%+v; want MinConns (3) open and idle", s)
		}
		all := p.AcquireAllIdle()
		dead.Store(all[1].Value())
		for _, l := range all {
			l.Release()
		}
		// Nobody acquires: only the background check can find it, on the
		// first check's pass, HealthCheckPeriod after maintenance began.
		time.Sleep(2 * period)
		synctest.Wait()
		if !dead.Load().closed.Load() {
			t.Fatalf("the dead idle connection still open after %s idle", 2*period)
		}
		if s := p.Stats(); s.IdleConns != 3 || d.dials.Load() != 4 {
			t.Fatalf("%+v after %d dials; want MinConns refilled with live connections (3 idle, 4 dials)", s, d.dials.Load())
		}
		if s := p.Stats(); s.Closed != 1 {
			t.Fatalf("%d connections closed, want only the dead one", s.Closed)
		}
		if checks.Load() < 3 {
			t.Fatalf("%d background checks, want every idle connection checked", checks.Load())
		}
	})
}

func TestHealthCheckPeriodValidation(t *testing.T) {
	check := func(context.Context, *fakeConn) error { return nil }
	dial := func(context.Context) (*fakeConn, error) { return &fakeConn{}, nil }
	for _, tc := range []struct {
		cfg  Config[*fakeConn]
		want string
	}{
		{Config[*fakeConn]{Dial: dial, MaxConns: 1, HealthCheckPeriod: time.Second}, "shoal: Config.HealthCheckPeriod is set but HealthCheck is nil; set HealthCheck to say how to check a connection"},
		{Config[*fakeConn]{Dial: dial, MaxConns: 1, MaxStreams: 4, HealthCheckPeriod: time.Second, HealthCheck: check}, "shoal: Config.HealthCheckPeriod applies to exclusive connections only; MaxStreams is 4"},
	} {
		err := tc.cfg.Validate()
		var ce *ConfigError
		if !errors.As(err, &ce) || err.Error() != tc.want {
			t.Errorf("Validate() = %v, want %q", err, tc.want)
		}
	}
}

// A Reset while the background check holds the idle connections must still
// close them: they are off the stacks, where Reset cannot see them.
func TestHealthCheckPeriodHonoursAResetDuringTheCheck(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		inCheck := make(chan struct{}, 8)
		release := make(chan struct{})
		var blocked atomic.Bool
		p, _ := newTestPool(t, Config[*fakeConn]{
			MaxConns: 2, Partitions: 1,
			HealthCheck: func(ctx context.Context, c *fakeConn) error {
				if _, background := ctx.Deadline(); background && blocked.CompareAndSwap(false, true) {
					inCheck <- struct{}{}
					<-release
				}
				return nil
			},
			HealthCheckAfter:  5 * time.Millisecond,
			HealthCheckPeriod: 20 * time.Millisecond,
		})
		a, b := mustAcquire(t, p), mustAcquire(t, p)
		old := []*fakeConn{a.Value(), b.Value()}
		a.Release()
		b.Release()
		<-inCheck // the background check holds both, checking the first
		p.Reset()
		close(release)
		synctest.Wait()
		if !old[0].closed.Load() || !old[1].closed.Load() {
			t.Fatalf("old connections closed: %v, %v; want both closed after Reset", old[0].closed.Load(), old[1].closed.Load())
		}
		l := mustAcquire(t, p)
		if l.Value() == old[0] || l.Value() == old[1] {
			t.Fatal("a connection open before Reset was handed out after it")
		}
		l.Release()
	})
}

// TryAcquireIdle hands out an idle connection, and with none idle says
// ErrWouldBlock without dialling, where TryAcquire would start a dial.
func TestTryAcquireIdleNeverDials(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 4})
		if _, err := p.TryAcquireIdle(); !errors.Is(err, ErrWouldBlock) {
			t.Fatalf("TryAcquireIdle on an empty pool: %v, want ErrWouldBlock", err)
		}
		synctest.Wait() // a dial it started would have run by now
		if n := d.dials.Load(); n != 0 {
			t.Fatalf("TryAcquireIdle dialled %d connections, want none", n)
		}
		mustAcquire(t, p).Release()
		l, err := p.TryAcquireIdle()
		if err != nil {
			t.Fatalf("TryAcquireIdle with one idle connection: %v", err)
		}
		if _, err := p.TryAcquireIdle(); !errors.Is(err, ErrWouldBlock) {
			t.Fatalf("TryAcquireIdle with the one connection leased: %v, want ErrWouldBlock", err)
		}
		l.Release()
		synctest.Wait()
		if n := d.dials.Load(); n != 1 {
			t.Fatalf("%d dials, want the one Acquire made", n)
		}
	})
}
