package shoal

import (
	"errors"
	"math"
	"strings"
	"testing"
)

// TestSizeSettingsBounded guards that a MaxStreams or Partitions too large
// to allocate is a ConfigError naming the field and the value, not a
// process killed for want of memory at New or at the first dial.
func TestSizeSettingsBounded(t *testing.T) {
	d := &fakeDialer{}
	for _, tc := range []struct {
		cfg   Config[*fakeConn]
		field string
	}{
		{Config[*fakeConn]{MaxConns: 2, MaxStreams: math.MaxInt32}, "MaxStreams"},
		{Config[*fakeConn]{MaxConns: 2, MaxStreams: maxStreamsLimit + 1}, "MaxStreams"},
		{Config[*fakeConn]{MaxConns: 2, Partitions: math.MaxInt32}, "Partitions"},
		{Config[*fakeConn]{MaxConns: 2, Partitions: maxPartitions + 1}, "Partitions"},
	} {
		tc.cfg.Dial, tc.cfg.Close = d.dial, d.close
		p, err := New(tc.cfg)
		if err == nil {
			p.Close(t.Context())
			t.Fatalf("New accepted %s (MaxStreams %d, Partitions %d)", tc.field, tc.cfg.MaxStreams, tc.cfg.Partitions)
		}
		var ce *ConfigError
		if !errors.As(err, &ce) || ce.Field != tc.field || !strings.Contains(err.Error(), "got ") {
			t.Fatalf("New: %v, want a ConfigError naming %s and its value", err, tc.field)
		}
	}
	// The bounds themselves are fine.
	for _, cfg := range []Config[*fakeConn]{
		{MaxConns: 2, MaxStreams: maxStreamsLimit},
		{MaxConns: 2, Partitions: maxPartitions},
	} {
		cfg.Dial, cfg.Close = d.dial, d.close
		p, err := New(cfg)
		if err != nil {
			t.Fatalf("New: %v", err)
		}
		if err := p.Close(t.Context()); err != nil {
			t.Fatal(err)
		}
	}
}

// The bounds and the message docs/settings.md gives, as users read them:
// Partitions above 1024 and MaxStreams above 65536 are errors, and a
// negative MaxDialing says what zero would have meant.
func TestSettingsDocBoundsAndMessage(t *testing.T) {
	base := func() Config[*fakeConn] {
		d := &fakeDialer{}
		return Config[*fakeConn]{MaxConns: 2, Dial: d.dial, Close: d.close}
	}
	for _, c := range []struct {
		name string
		set  func(*Config[*fakeConn])
		ok   bool
	}{
		{"Partitions 1024", func(c *Config[*fakeConn]) { c.Partitions = 1024 }, true},
		{"Partitions 1025", func(c *Config[*fakeConn]) { c.Partitions = 1025 }, false},
		{"MaxStreams 65536", func(c *Config[*fakeConn]) { c.MaxStreams = 65536 }, true},
		{"MaxStreams 65537", func(c *Config[*fakeConn]) { c.MaxStreams = 65537 }, false},
	} {
		cfg := base()
		c.set(&cfg)
		if err := cfg.Validate(); (err == nil) != c.ok {
			t.Errorf("%s: Validate says %v, want ok=%v", c.name, err, c.ok)
		}
	}
	cfg := base()
	cfg.MaxDialing = -1
	want := "shoal: Config.MaxDialing must be >= 0 (0 means min(MaxConns, 4)), got -1"
	if err := cfg.Validate(); err == nil || err.Error() != want {
		t.Errorf("MaxDialing -1: %v, want %q", err, want)
	}
}
