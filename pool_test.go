package shoal

import (
	"context"
	"testing"
	"time"
)

// plain (the shortest Acquire and Release) holds exactly when nothing has
// to run or be recorded on the way in or out: any feature that needs a
// check, a hook, the clock, a lifetime or tracking turns it off, and so
// does multiplexing. A feature added without a look at plain would either
// be skipped by the fast path or slow every pool down; this pins the list.
func TestPlainIsDerivedFromEveryFeature(t *testing.T) {
	dial := func(context.Context) (int, error) { return 0, nil }
	cases := []struct {
		name  string
		set   func(*Config[int])
		plain bool
	}{
		{"nothing", func(*Config[int]) {}, true},
		{"MinIdle", func(c *Config[int]) { c.MinIdle = 1 }, true},
		{"MinConns", func(c *Config[int]) { c.MinConns = 1 }, true},
		{"Partitions", func(c *Config[int]) { c.Partitions = 2 }, true},
		{"MaxWaiters", func(c *Config[int]) { c.MaxWaiters = 1 }, true},
		{"BargeWindow", func(c *Config[int]) { c.BargeWindow = time.Millisecond }, true},
		{"DialTimeout", func(c *Config[int]) { c.DialTimeout = time.Second }, true},
		{"OnConnect", func(c *Config[int]) { c.Hooks.OnConnect = func(context.Context, int) error { return nil } }, true},
		{"OnDisconnect", func(c *Config[int]) { c.Hooks.OnDisconnect = func(int, Reason) {} }, true},
		{"MaxStreams", func(c *Config[int]) { c.MaxStreams = 2 }, false},
		{"MaxLifetime", func(c *Config[int]) { c.MaxLifetime = time.Hour }, false},
		{"MaxIdleTime", func(c *Config[int]) { c.MaxIdleTime = time.Hour }, false},
		{"HealthCheck", func(c *Config[int]) { c.HealthCheck = func(context.Context, int) error { return nil } }, false},
		{"BeforeAcquire", func(c *Config[int]) { c.Hooks.BeforeAcquire = func(context.Context, int) bool { return true } }, false},
		{"AfterRelease", func(c *Config[int]) { c.Hooks.AfterRelease = func(int) bool { return true } }, false},
		{"Observer", func(c *Config[int]) { c.Observer = BaseObserver{} }, false},
		{"LeakThreshold", func(c *Config[int]) { c.LeakThreshold = time.Hour }, false},
		{"QueueTarget", func(c *Config[int]) { c.QueueTarget = time.Second }, false},
	}
	for _, tc := range cases {
		cfg := Config[int]{Dial: dial, MaxConns: 4}
		tc.set(&cfg)
		p, err := New(cfg)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if p.plain != tc.plain {
			t.Errorf("%s: plain = %v, want %v", tc.name, p.plain, tc.plain)
		}
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}
