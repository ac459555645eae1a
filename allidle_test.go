package shoal

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
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
	p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 2, MaxLifetime: 20 * time.Millisecond})
	mustAcquire(t, p).Release()
	time.Sleep(30 * time.Millisecond)
	if all := p.AcquireAllIdle(); len(all) != 0 {
		t.Fatalf("AcquireAllIdle handed out %d expired connections", len(all))
	}
	eventually(t, "the expired connection closed", func() bool { return d.closes.Load() == 1 })
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
		HealthCheckPeriod: 20 * time.Millisecond,
	})
	eventually(t, "MinConns open", func() bool { return p.Stats().IdleConns == 3 })
	all := p.AcquireAllIdle()
	dead.Store(all[1].Value())
	for _, l := range all {
		l.Release()
	}
	// Nobody acquires: only the background check can find it.
	eventually(t, "the dead idle connection closed", func() bool { return dead.Load().closed.Load() })
	eventually(t, "MinConns refilled with live connections", func() bool {
		return p.Stats().IdleConns == 3 && d.dials.Load() == 4
	})
	if s := p.Stats(); s.Closed != 1 {
		t.Fatalf("%d connections closed, want only the dead one", s.Closed)
	}
	if checks.Load() < 3 {
		t.Fatalf("%d background checks, want every idle connection checked", checks.Load())
	}
}

func TestHealthCheckPeriodValidation(t *testing.T) {
	check := func(context.Context, *fakeConn) error { return nil }
	dial := func(context.Context) (*fakeConn, error) { return &fakeConn{}, nil }
	for _, tc := range []struct {
		cfg  Config[*fakeConn]
		want string
	}{
		{Config[*fakeConn]{Dial: dial, MaxConns: 1, HealthCheckPeriod: -1, HealthCheck: check}, "shoal: Config.HealthCheckPeriod must be >= 0, got -1ns"},
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
	eventually(t, "both old connections closed", func() bool { return old[0].closed.Load() && old[1].closed.Load() })
	l := mustAcquire(t, p)
	if l.Value() == old[0] || l.Value() == old[1] {
		t.Fatal("a connection open before Reset was handed out after it")
	}
	l.Release()
}

// TryAcquireIdle hands out an idle connection, and with none idle says
// ErrWouldBlock without dialling, where TryAcquire would start a dial.
func TestTryAcquireIdleNeverDials(t *testing.T) {
	p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 4})
	if _, err := p.TryAcquireIdle(); !errors.Is(err, ErrWouldBlock) {
		t.Fatalf("TryAcquireIdle on an empty pool: %v, want ErrWouldBlock", err)
	}
	time.Sleep(20 * time.Millisecond) // room for a dial it must not have started
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
	settle(t, p)
	if n := d.dials.Load(); n != 1 {
		t.Fatalf("%d dials, want the one Acquire made", n)
	}
}
