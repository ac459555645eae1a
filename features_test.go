package shoal

import (
	"context"
	"testing"
	"time"
)

// Every rule that derives a feature from a Config, pinned. plain (the
// shortest Acquire and Release) holds exactly when nothing has to run or be
// recorded on the way in or out: a feature added without a look at these
// rules would either be skipped by the fast path or slow every pool down.
func TestFeaturesDerivedFromTheConfig(t *testing.T) {
	dial := func(context.Context) (int, error) { return 0, nil }
	check := func(context.Context, int) error { return nil }
	// base is what a Config with Dial and MaxConns 4 alone turns on, on a
	// machine with 8 processors.
	base := features{plain: true, quickTake: true, maxStreams: 1, busyStreams: 1, partitions: 4, maxDialing: 4}
	cases := []struct {
		name string
		set  func(*Config[int])
		want func(*features)
	}{
		{"nothing", func(*Config[int]) {}, func(*features) {}},
		{"MinIdle", func(c *Config[int]) { c.MinIdle = 1 }, func(*features) {}},
		{"MinConns", func(c *Config[int]) { c.MinConns = 1 }, func(*features) {}},
		{"Partitions", func(c *Config[int]) { c.Partitions = 2 }, func(f *features) { f.partitions = 2 }},
		{"MaxConns below GOMAXPROCS", func(c *Config[int]) { c.MaxConns = 2 }, func(f *features) { f.partitions = 2 }},
		{"MaxDialing", func(c *Config[int]) { c.MaxDialing = 9 }, func(f *features) { f.maxDialing = 9 }},
		{"MaxWaiters", func(c *Config[int]) { c.MaxWaiters = 1 }, func(*features) {}},
		{"BargeWindow", func(c *Config[int]) { c.BargeWindow = time.Millisecond }, func(*features) {}},
		{"DialTimeout", func(c *Config[int]) { c.DialTimeout = time.Second }, func(*features) {}},
		{"OnConnect", func(c *Config[int]) { c.Hooks.OnConnect = func(context.Context, int) error { return nil } }, func(*features) {}},
		{"OnDisconnect", func(c *Config[int]) { c.Hooks.OnDisconnect = func(int, Reason) {} }, func(*features) {}},
		{"MaxStreams", func(c *Config[int]) { c.MaxStreams = 2 }, func(f *features) {
			f.plain, f.quickTake, f.multiplexed, f.maxStreams, f.busyStreams, f.partitions = false, false, true, 2, 2, 1
		}},
		{"BusyStreams", func(c *Config[int]) { c.MaxStreams, c.BusyStreams = 4, 2 }, func(f *features) {
			f.plain, f.quickTake, f.multiplexed, f.maxStreams, f.busyStreams, f.partitions = false, false, true, 4, 2, 1
		}},
		{"MaxLifetime", func(c *Config[int]) { c.MaxLifetime = time.Hour }, func(f *features) {
			f.plain, f.quickTake, f.checkOnTake = false, false, true
		}},
		{"MaxIdleTime", func(c *Config[int]) { c.MaxIdleTime = time.Hour }, func(f *features) {
			f.plain, f.clockOnIdle = false, true
		}},
		{"HealthCheck", func(c *Config[int]) { c.HealthCheck = check }, func(f *features) {
			f.plain, f.quickTake, f.checkOnTake, f.ctxChecks, f.clockOnIdle = false, false, true, true, true
			f.healthAfter = int64(defaultHealthCheckAfter)
		}},
		{"HealthCheckAfter", func(c *Config[int]) { c.HealthCheck, c.HealthCheckAfter = check, time.Minute }, func(f *features) {
			f.plain, f.quickTake, f.checkOnTake, f.ctxChecks, f.clockOnIdle = false, false, true, true, true
			f.healthAfter = int64(time.Minute)
		}},
		{"BeforeAcquire", func(c *Config[int]) { c.Hooks.BeforeAcquire = func(context.Context, int) bool { return true } }, func(f *features) {
			f.plain, f.quickTake, f.checkOnTake, f.ctxChecks = false, false, true, true
		}},
		{"AfterRelease", func(c *Config[int]) { c.Hooks.AfterRelease = func(int) bool { return true } }, func(f *features) {
			f.plain = false
		}},
		{"Observer", func(c *Config[int]) { c.Observer = BaseObserver{} }, func(f *features) {
			f.plain, f.tracking, f.trackHeld = false, true, true
		}},
		{"tracing Observer", func(c *Config[int]) { c.Observer = &recordingTracer{} }, func(f *features) {
			f.plain, f.tracking, f.trackHeld, f.nameTaker = false, true, true, true
		}},
		{"tracing Observer and LeakThreshold", func(c *Config[int]) { c.Observer, c.LeakThreshold = &recordingTracer{}, time.Hour }, func(f *features) {
			f.plain, f.tracking, f.trackHeld = false, true, true // the leak's whole stack names the taker
		}},
		{"LeakThreshold", func(c *Config[int]) { c.LeakThreshold = time.Hour }, func(f *features) {
			f.plain, f.tracking, f.trackHeld = false, true, true
		}},
		{"QueueTarget", func(c *Config[int]) { c.QueueTarget = time.Second }, func(f *features) {
			f.plain, f.tracking = false, true
		}},
	}
	for _, tc := range cases {
		cfg := Config[int]{Dial: dial, MaxConns: 4}
		tc.set(&cfg)
		if err := cfg.Validate(); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		want := base
		tc.want(&want)
		if got := deriveFeatures(&cfg, 8); got != want {
			t.Errorf("%s:\n got %+v\nwant %+v", tc.name, got, want)
		}
	}
}
