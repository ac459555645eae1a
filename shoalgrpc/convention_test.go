package shoalgrpc

import (
	"bytes"
	"errors"
	"log/slog"
	"math"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// Zero is the default written on each field, negative is off where off
// makes sense and an error where it does not.
func TestOptionsZeroIsTheDefaultNegativeIsOff(t *testing.T) {
	zero := Options{}.withDefaults()
	if zero.MaxConns != 16 || zero.MaxStreams != 100 || zero.MaxDialing != math.MaxInt32 || zero.DialTimeout != 20*time.Second ||
		zero.MaxIdleTime != 5*time.Minute || zero.MaxLifetime != 0 || zero.LifetimeJitter != 0 {
		t.Errorf("defaults: %+v", zero)
	}
	if j := (Options{MaxLifetime: time.Hour}).withDefaults().LifetimeJitter; j != 6*time.Minute {
		t.Errorf("LifetimeJitter 0 with MaxLifetime 1h: %s, want a tenth, 6m", j)
	}
	if j := (Options{MaxLifetime: time.Hour, LifetimeJitter: -1}).withDefaults().LifetimeJitter; j != 0 {
		t.Errorf("LifetimeJitter -1: %s, want none", j)
	}
	off := Options{MaxLifetime: -1, MaxIdleTime: -1}.withDefaults()
	if off.MaxLifetime != 0 || off.LifetimeJitter != 0 || off.MaxIdleTime != 0 {
		t.Errorf("MaxLifetime -1, MaxIdleTime -1: %+v; want 0 (the core's off) for both and no jitter", off)
	}
	// The pool takes every "off", and refuses what has none.
	p := newTestPool(t, "127.0.0.1:1", Options{MinConns: -1, MaxLifetime: -1, LifetimeJitter: -1, MaxIdleTime: -1,
		DialTimeout: -1, MaxWaiters: -1, LeakThreshold: -1})
	if st := p.Stats(); st.MaxConns != 16 || st.MinConns != 0 {
		t.Errorf("Stats %+v", st)
	}
	for field, o := range map[string]Options{"MaxConns": {MaxConns: -1}, "MaxStreams": {MaxStreams: -1}, "MaxDialing": {MaxDialing: -1},
		"LifetimeJitter": {LifetimeJitter: time.Minute}} {
		_, err := NewClient("127.0.0.1:1", o)
		var ce *shoal.ConfigError
		if !errors.As(err, &ce) || ce.Struct != "shoalgrpc.Options" || ce.Field != field {
			t.Errorf("%s -1: %v, want a ConfigError naming Options.%s", field, err, field)
		}
	}
}

// The pool is named after the target (its credentials removed) or Name, in
// Stats, errors and log lines, which go to slog.Default() when Logger is
// nil.
func TestPoolNamedInStatsErrorsAndLogs(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	defer slog.SetDefault(old)

	if got := newTestPool(t, "dns:///user:pw@127.0.0.1:1", Options{}).Stats().Name; strings.Contains(got, "pw") || !strings.Contains(got, "127.0.0.1:1") {
		t.Errorf("default name %q; want the target without its password", got)
	}
	p := newTestPool(t, "127.0.0.1:1", Options{Name: "inventory", DialTimeout: 2 * time.Second})
	if got := p.Stats().Name; got != "inventory" {
		t.Errorf("Stats().Name = %q, want inventory", got)
	}
	err := p.Invoke(testContext(t, 10*time.Second), "/grpc.testing.TestService/EmptyCall", &testpb.Empty{}, &testpb.Empty{})
	if err == nil || !strings.HasPrefix(err.Error(), `shoalgrpc pool "inventory": acquire: `) {
		t.Errorf("call: %v; want an error naming the pool", err)
	}
	if log := buf.String(); !strings.Contains(log, "dial failed") || !strings.Contains(log, "pool=inventory") {
		t.Errorf("the default logger got %q; want a dial failure with pool=inventory", log)
	}
}
