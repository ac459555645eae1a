package shoalpgx

import (
	"context"
	"errors"
	"log/slog"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// lineLog is a slog.Handler that keeps the messages logged to it.
type lineLog struct {
	mu    sync.Mutex
	lines []string
}

func (h *lineLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *lineLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *lineLog) WithGroup(string) slog.Handler            { return h }
func (h *lineLog) Handle(_ context.Context, r slog.Record) error {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, r.Message)
	return nil
}

func (h *lineLog) count(msg string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	n := 0
	for _, l := range h.lines {
		if l == msg {
			n++
		}
	}
	return n
}

// A wrong password and an unknown database are errors no retry can mend:
// the first Ping gets the server's refusal after one login, a second Ping
// right after gets it too without another login, and the pool writes one
// line about it, not one per try.
func TestRefusedLoginFailsAtOnceWithoutRetrying(t *testing.T) {
	for _, tc := range []struct {
		name, code string
		mutate     func(*Config)
	}{
		{"wrong password", "28P01", func(c *Config) { c.ConnConfig.Password = "not-the-password" }},
		{"unknown database", "3D000", func(c *Config) { c.ConnConfig.Database = "shoal_no_such_database" }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			log := &lineLog{}
			p := newTestPool(t, func(c *Config) {
				tc.mutate(c)
				c.MinConns = 1
				c.Logger = slog.New(log)
			})
			for i := range 2 {
				err := p.Ping(pgtest.Ctx(t))
				var pgErr *pgconn.PgError
				if !errors.As(err, &pgErr) || pgErr.Code != tc.code || !errors.Is(err, shoal.ErrPermanent) {
					t.Fatalf("Ping %d: %v, want SQLSTATE %s marked permanent", i, err, tc.code)
				}
			}
			// MinConns's dial and the first Ping's may both have run: two
			// logins at most, where retries would have made a dozen.
			if s := p.Stat().Shoal(); s.Dials > 2 || s.FailedAcquires != 2 {
				t.Fatalf("%d logins and %d failed acquires for two Pings, want at most 2 and 2", s.Dials, s.FailedAcquires)
			}
			if n := log.count("shoal: dial failed"); n != 1 {
				t.Fatalf("%d lines about the failed dial, want 1", n)
			}
		})
	}
}

// A pool that never connected hands the first dial's error to Ping after
// that one dial, as pgxpool does, instead of retrying for a second. The
// pool's own retry, 10ms later in the background, is held until Ping has
// returned: a Ping that waited for it would return only at its deadline.
func TestNeverConnectedPingFailsAfterOneDial(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // a port nobody listens on: connections are refused
	cfg, err := ParseConfig("postgres://shoal@" + addr + "/shoal_test?sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	var dials atomic.Int32
	held := make(chan struct{})
	cfg.ConnConfig.DialFunc = func(ctx context.Context, network, addr string) (net.Conn, error) {
		if dials.Add(1) > 1 {
			select {
			case <-held:
			case <-ctx.Done():
			}
		}
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}
	p := newPoolFor(t, cfg)
	t.Cleanup(func() { close(held) }) // before the pool's Close, registered first
	ctx, cancel := context.WithTimeout(pgtest.Ctx(t), 5*time.Second)
	defer cancel()
	err = p.Ping(ctx)
	if !errors.Is(err, shoal.ErrDial) || errors.Is(err, shoal.ErrPermanent) {
		t.Fatalf("Ping: %v, want the refused dial, not marked permanent", err)
	}
	var opErr *net.OpError
	if !errors.As(err, &opErr) || ctx.Err() != nil {
		t.Fatalf("Ping: %v, want the first dial's refusal, before its deadline", err)
	}
}
