package shoalhttp

import (
	"bytes"
	"context"
	"log/slog"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
)

// The settings the core pool of an origin gets from Options: zero is the
// default written on each field, negative is off (the core's zero).
func TestOptionsZeroIsTheDefaultNegativeIsOff(t *testing.T) {
	dial := func(context.Context) (struct{}, error) { return struct{}{}, nil }
	cfgOf := func(o Options) shoal.Config[struct{}] {
		return poolConfig[struct{}](o.withDefaults(), "http://x:80", dial, nil)
	}
	zero, off := cfgOf(Options{}), cfgOf(Options{
		MinIdle: -1, MinConns: -1, MaxWaiters: -1, MaxLifetime: -1, LifetimeJitter: -1,
		MaxIdleTime: -1, DialTimeout: -1, TLSHandshakeTimeout: -1, LeakThreshold: -1,
	})
	for _, c := range []struct {
		field     string
		got, want any
	}{
		{"MaxConns", zero.MaxConns, 64},
		{"MinIdle", zero.MinIdle, 0},
		{"MinIdle<0", off.MinIdle, -1}, // the core reads it as none
		{"MinConns<0", off.MinConns, 0},
		{"MaxWaiters", zero.MaxWaiters, 0},
		{"MaxWaiters<0", off.MaxWaiters, -1}, // the core reads it as no bound
		{"MaxLifetime", zero.MaxLifetime, 10 * time.Minute},
		{"MaxLifetime<0", off.MaxLifetime, time.Duration(0)},
		{"LifetimeJitter", zero.LifetimeJitter, time.Minute},
		{"LifetimeJitter<0", cfgOf(Options{LifetimeJitter: -1}).LifetimeJitter, time.Duration(0)},
		{"MaxIdleTime", zero.MaxIdleTime, 90 * time.Second},
		{"MaxIdleTime<0", off.MaxIdleTime, time.Duration(0)},
		{"DialTimeout+TLSHandshakeTimeout", zero.DialTimeout, 40 * time.Second},
		{"DialTimeout<0", cfgOf(Options{DialTimeout: -1}).DialTimeout, time.Duration(0)},
		{"TLSHandshakeTimeout<0", cfgOf(Options{TLSHandshakeTimeout: -1}).DialTimeout, time.Duration(0)},
		{"LeakThreshold<0", off.LeakThreshold, -time.Duration(1)}, // the core reads it as off
		{"Name", zero.Name, "http://x:80"},
		{"Name set", cfgOf(Options{Name: "payments"}).Name, "payments http://x:80"},
	} {
		if c.got != c.want {
			t.Errorf("%s: the pool gets %v, want %v", c.field, c.got, c.want)
		}
	}
	d := Options{BargeWindow: -1, ExpectContinueTimeout: -1, MaxStreamsPerConn: -1, MaxResponseHeaderBytes: 0}.withDefaults()
	if d.BargeWindow != 0 || d.ExpectContinueTimeout >= 0 || d.MaxStreamsPerConn != 0 || d.MaxResponseHeaderBytes != 10<<20 {
		t.Errorf("BargeWindow -1: %s (want 0, strict), ExpectContinueTimeout -1: %s (want no wait), MaxStreamsPerConn -1: %d (want 0, the server's), MaxResponseHeaderBytes 0: %d (want 10 MiB)",
			d.BargeWindow, d.ExpectContinueTimeout, d.MaxStreamsPerConn, d.MaxResponseHeaderBytes)
	}
	if d := (Options{}).withDefaults(); d.BargeWindow != 4*time.Millisecond || d.ExpectContinueTimeout != time.Second {
		t.Errorf("defaults: BargeWindow %s (want 4ms), ExpectContinueTimeout %s (want 1s)", d.BargeWindow, d.ExpectContinueTimeout)
	}
	// And the Transport takes every one of them.
	for _, o := range []Options{{MinIdle: -1, MinConns: -1, MaxWaiters: -1, MaxLifetime: -1, LifetimeJitter: -1, MaxIdleTime: -1,
		DialTimeout: -1, TLSHandshakeTimeout: -1, LeakThreshold: -1, BargeWindow: -1, ExpectContinueTimeout: -1, MaxStreamsPerConn: -1}} {
		tr, err := NewTransport(o)
		if err != nil {
			t.Fatalf("NewTransport with every setting off: %v", err)
		}
		_ = tr.Close(context.Background())
	}
}

// An origin's pool is named after Options.Name and the origin, in Stats,
// in errors and on every log line; with no Logger the lines go to
// slog.Default().
func TestOriginPoolNamedInStatsErrorsAndLogs(t *testing.T) {
	var buf bytes.Buffer
	old := slog.Default()
	slog.SetDefault(slog.New(slog.NewTextHandler(&buf, nil)))
	defer slog.SetDefault(old)

	addr := refusedAddr(t)
	tr := newTestTransport(t, Options{Name: "payments", MaxConns: 1})
	origin := "http://" + addr
	req, _ := http.NewRequest("GET", origin+"/", nil)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := tr.RoundTrip(req.WithContext(ctx))
	want := "payments " + origin
	if err == nil || !strings.Contains(err.Error(), `"`+want+`"`) {
		t.Errorf("RoundTrip: %v; want an error naming the pool %q", err, want)
	}
	if st, ok := tr.Stats()[origin]; !ok || st.Name != want {
		t.Errorf("Stats()[%q].Name = %q, want %q", origin, st.Name, want)
	}
	if log := buf.String(); !strings.Contains(log, "dial failed") || !strings.Contains(log, `pool="`+want+`"`) || !strings.Contains(log, "origin="+origin) {
		t.Errorf("the default logger got %q; want a dial failure with pool=%q and origin=%s", log, want, origin)
	}
}
