package shoal

import (
	"context"
	"runtime"
	"testing"
	"testing/synctest"
	"time"
)

// Zero means the default written beside each field.
func TestConfigZeroMeansTheDefault(t *testing.T) {
	p, _ := newTestPool(t, Config[*fakeConn]{
		HealthCheck: func(context.Context, *fakeConn) error { return nil },
		QueueTarget: time.Millisecond,
	})
	if want := max(4, runtime.NumCPU()); p.Stats().MaxConns != want {
		t.Errorf("MaxConns 0: Stats.MaxConns = %d, want max(4, NumCPU) = %d", p.Stats().MaxConns, want)
	}
	// MaxDialing 0, min(MaxConns, 4): the dials in flight are also held
	// under MaxConns (TestMaxDialingDefaultFollowsSetMaxConns).
	if p.feat.maxDialing != 4 {
		t.Errorf("MaxDialing 0: %d dials at once, want 4, within MaxConns", p.feat.maxDialing)
	}
	if want := min(runtime.GOMAXPROCS(0), p.cfg.MaxConns, 16); p.feat.partitions != want {
		t.Errorf("Partitions 0: %d, want min(GOMAXPROCS, MaxConns, 16) = %d", p.feat.partitions, want)
	}
	if p.feat.healthAfter != int64(time.Second) {
		t.Errorf("HealthCheckAfter 0: %s, want 1s", time.Duration(p.feat.healthAfter))
	}
	if p.shed.interval != int64(time.Second) {
		t.Errorf("QueueInterval 0: %s, want 1s", time.Duration(p.shed.interval))
	}
	for name, got := range map[string]time.Duration{
		"MaxLifetime": p.cfg.MaxLifetime, "LifetimeJitter": p.cfg.LifetimeJitter, "MaxIdleTime": p.cfg.MaxIdleTime,
		"BargeWindow": p.cfg.BargeWindow, "HealthCheckPeriod": p.cfg.HealthCheckPeriod,
		"DialTimeout": p.cfg.DialTimeout, "LeakThreshold": p.cfg.LeakThreshold,
	} {
		if got != 0 {
			t.Errorf("%s 0: the pool uses %s, want 0 (off)", name, got)
		}
	}
}

// A negative value means off: New accepts it, and the pool runs exactly as
// with the setting off. The settings where off makes no sense are errors
// (TestNewValidatesEveryField).
func TestConfigNegativeMeansOff(t *testing.T) {
	cases := []struct {
		field string
		set   func(*Config[*fakeConn])
		get   func(*Config[*fakeConn]) int64
	}{
		{"MinIdle", func(c *Config[*fakeConn]) { c.MinIdle = -1 }, func(c *Config[*fakeConn]) int64 { return int64(c.MinIdle) }},
		{"MinConns", func(c *Config[*fakeConn]) { c.MinConns = -1 }, func(c *Config[*fakeConn]) int64 { return int64(c.MinConns) }},
		{"MaxWaiters", func(c *Config[*fakeConn]) { c.MaxWaiters = -1 }, func(c *Config[*fakeConn]) int64 { return int64(c.MaxWaiters) }},
		{"BargeWindow", func(c *Config[*fakeConn]) { c.BargeWindow = -1 }, func(c *Config[*fakeConn]) int64 { return int64(c.BargeWindow) }},
		{"QueueTarget", func(c *Config[*fakeConn]) { c.QueueTarget = -1 }, func(c *Config[*fakeConn]) int64 { return int64(c.QueueTarget) }},
		{"MaxLifetime", func(c *Config[*fakeConn]) { c.MaxLifetime = -1 }, func(c *Config[*fakeConn]) int64 { return int64(c.MaxLifetime) }},
		{"LifetimeJitter", func(c *Config[*fakeConn]) { c.MaxLifetime = time.Hour; c.LifetimeJitter = -1 }, func(c *Config[*fakeConn]) int64 { return int64(c.LifetimeJitter) }},
		{"MaxIdleTime", func(c *Config[*fakeConn]) { c.MaxIdleTime = -1 }, func(c *Config[*fakeConn]) int64 { return int64(c.MaxIdleTime) }},
		{"HealthCheckPeriod", func(c *Config[*fakeConn]) { c.HealthCheckPeriod = -1 }, func(c *Config[*fakeConn]) int64 { return int64(c.HealthCheckPeriod) }},
		{"DialTimeout", func(c *Config[*fakeConn]) { c.DialTimeout = -1 }, func(c *Config[*fakeConn]) int64 { return int64(c.DialTimeout) }},
		{"LeakThreshold", func(c *Config[*fakeConn]) { c.LeakThreshold = -1 }, func(c *Config[*fakeConn]) int64 { return int64(c.LeakThreshold) }},
	}
	for _, tc := range cases {
		t.Run(tc.field, func(t *testing.T) {
			cfg := Config[*fakeConn]{MaxConns: 4}
			tc.set(&cfg)
			p, _ := newTestPool(t, cfg)
			if got := tc.get(&p.cfg); got != 0 {
				t.Errorf("the pool reads %s as %d, want 0 (off)", tc.field, got)
			}
			off, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 4, MaxLifetime: cfg.MaxLifetime})
			if p.feat != off.feat {
				t.Errorf("features %+v, want those of the setting off: %+v", p.feat, off.feat)
			}
		})
	}
}

// What "off" does, for the settings whose negative value a user is most
// likely to write: no lifetime, no idle limit, no bound on waiters.
func TestConfigNegativeLimitsKeepConnections(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		p, d := newTestPool(t, Config[*fakeConn]{MaxConns: 1, MaxLifetime: -1, MaxIdleTime: -1, MaxWaiters: -1})
		l := mustAcquire(t, p)
		first := l.Value()
		// Twenty callers wait: no bound refuses any.
		errs := make(chan error, 20)
		for range 20 {
			go func() {
				l, err := p.Acquire(context.Background())
				if err == nil {
					l.Release()
				}
				errs <- err
			}()
		}
		synctest.Wait()
		l.Release()
		for range 20 {
			if err := <-errs; err != nil {
				t.Fatalf("a waiter failed with MaxWaiters -1: %v", err)
			}
		}
		time.Sleep(10 * time.Hour)
		synctest.Wait()
		l = mustAcquire(t, p)
		defer l.Release()
		if l.Value() != first || d.dials.Load() != 1 {
			t.Fatalf("after 10h idle and old, %d dials, the same connection: %v; want one dial", d.dials.Load(), l.Value() == first)
		}
	})
}
