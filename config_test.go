package shoal

import (
	"context"
	"errors"
	"math"
	"strings"
	"testing"
	"time"
)

func TestNewValidatesEveryField(t *testing.T) {
	dial := func(context.Context) (int, error) { return 0, nil }
	base := func() Config[int] { return Config[int]{Dial: dial, MaxConns: 4} }
	cases := []struct {
		field  string
		mutate func(*Config[int])
	}{
		{"Dial", func(c *Config[int]) { c.Dial = nil }},
		{"MaxConns", func(c *Config[int]) { c.MaxConns = -1 }},
		{"MaxConns", func(c *Config[int]) { c.MaxConns = maxConnsLimit + 1 }},
		{"MaxDialing", func(c *Config[int]) { c.MaxDialing = 1 << 31 }},
		{"InitialMaxConns", func(c *Config[int]) { c.InitialMaxConns = -1 }},
		{"InitialMaxConns", func(c *Config[int]) { c.InitialMaxConns = 5 }},
		{"BargeWindow", func(c *Config[int]) { c.BargeWindow = time.Duration(math.MaxInt64) }},
		{"MinIdle", func(c *Config[int]) { c.MinIdle = 5 }},
		{"MinIdle", func(c *Config[int]) { c.MinIdle = 1; c.MaxStreams = 2 }},
		{"MinConns", func(c *Config[int]) { c.MinConns = 5 }},
		{"MaxStreams", func(c *Config[int]) { c.MaxStreams = -1 }},
		{"Partitions", func(c *Config[int]) { c.Partitions = -2 }},
		{"MaxDialing", func(c *Config[int]) { c.MaxDialing = -1 }},
		{"BargeWindow", func(c *Config[int]) { c.BargeWindow = time.Millisecond; c.MaxStreams = 4 }},
		{"QueueInterval", func(c *Config[int]) { c.QueueInterval = -time.Second }},
		{"QueueInterval", func(c *Config[int]) { c.QueueInterval = time.Second }},
		{"LifetimeJitter", func(c *Config[int]) { c.LifetimeJitter = time.Second }},
		{"HealthCheckAfter", func(c *Config[int]) { c.HealthCheckAfter = -time.Second }},
		{"HealthCheckAfter", func(c *Config[int]) { c.HealthCheckAfter = time.Second }},
		{"Partitions", func(c *Config[int]) { c.Partitions = 2; c.MaxStreams = 4 }},
		{"LeakReclaim", func(c *Config[int]) { c.LeakReclaim = true }},
		{"LeakReclaim", func(c *Config[int]) { c.LeakReclaim = true; c.LeakThreshold = -time.Second }},
		{"LifetimeJitter", func(c *Config[int]) { c.LifetimeJitter = time.Second; c.MaxLifetime = -time.Second }},
		{"QueueInterval", func(c *Config[int]) { c.QueueInterval = time.Second; c.QueueTarget = -time.Second }},
		{"HealthCheckPeriod", func(c *Config[int]) { c.HealthCheckPeriod = time.Second }},
		{"MinIdle", func(c *Config[int]) { c.MaxConns = 0; c.MinIdle = defaultMaxConns() + 1 }},
	}
	for _, tc := range cases {
		cfg := base()
		tc.mutate(&cfg)
		p, err := New(cfg)
		if err == nil {
			p.Close(context.Background())
			t.Errorf("%s: New accepted a bad config", tc.field)
			continue
		}
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != tc.field {
			t.Errorf("%s: got %v, want a ConfigError naming %s", tc.field, err, tc.field)
		}
		if verr := cfg.Validate(); verr == nil || verr.Error() != err.Error() {
			t.Errorf("%s: Validate says %v, New %v; want the same", tc.field, verr, err)
		}
		if !strings.Contains(err.Error(), "Config."+tc.field) {
			t.Errorf("%s: message %q does not name the field", tc.field, err)
		}
	}
}

func TestNewAcceptsMinimalConfig(t *testing.T) {
	p, err := New(Config[int]{Dial: func(context.Context) (int, error) { return 1, nil }, MaxConns: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.Close(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestReasonString(t *testing.T) {
	want := map[Reason]string{
		ReasonDiscarded: "discarded", ReasonLifetime: "lifetime", ReasonIdle: "idle",
		ReasonHealth: "health", ReasonRejected: "rejected", ReasonPoolClosed: "pool_closed",
		ReasonRetired: "retired", ReasonLeaked: "leaked", ReasonReset: "reset", ReasonResized: "resized",
		ReasonRevoked: "revoked", Reason(0): "reason(0)", Reason(99): "reason(99)",
	}
	for r, s := range want {
		if r.String() != s {
			t.Errorf("Reason(%d).String() = %q, want %q", int(r), r.String(), s)
		}
	}
}

// An adapter reports its own fields through the core's ConfigError, named
// by its package and type.
func TestConfigErrorNamesTheStruct(t *testing.T) {
	for _, tc := range []struct {
		e    ConfigError
		want string
	}{
		{ConfigError{Field: "MinIdle", Reason: "must be >= 0, got -1"}, "shoal: Config.MinIdle must be >= 0, got -1"},
		{ConfigError{Struct: "shoalhttp.Options", Field: "DialTimeout", Reason: "must be >= 0"}, "shoalhttp: Options.DialTimeout must be >= 0"},
	} {
		if got := tc.e.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}
