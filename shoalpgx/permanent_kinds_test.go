package shoalpgx

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// warnLog keeps the Warn lines logged to it, with their "permanent"
// attribute.
type warnLog struct {
	mu    sync.Mutex
	lines []string // message, then " permanent" when the line says so
}

func (h *warnLog) Enabled(context.Context, slog.Level) bool { return true }
func (h *warnLog) WithAttrs([]slog.Attr) slog.Handler       { return h }
func (h *warnLog) WithGroup(string) slog.Handler            { return h }
func (h *warnLog) Handle(_ context.Context, r slog.Record) error {
	if r.Level != slog.LevelWarn {
		return nil
	}
	line := r.Message
	r.Attrs(func(a slog.Attr) bool {
		if a.Key == "permanent" && a.Value.Kind() == slog.KindBool && a.Value.Bool() {
			line += " permanent"
		}
		return true
	})
	h.mu.Lock()
	defer h.mu.Unlock()
	h.lines = append(h.lines, line)
	return nil
}

func (h *warnLog) get() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return append([]string(nil), h.lines...)
}

// The refusals docs/operating.md and docs/from-pgxpool.md call permanent
// beyond a wrong password and an unknown database
// (TestRefusedLoginFailsAtOnceWithoutRetrying), each from a real server:
// an unknown role, a certificate the client rejects (sslmode=verify-full
// against the test server's self-signed one) and a server that refuses
// the TLS sslmode requires (PgBouncer without TLS). Each is marked
// shoal.ErrPermanent, a second Ping gets it again without another login,
// and the pool's log says so once, at Warn, with permanent=true.
func TestRefusalsNoRetryCanMendArePermanent(t *testing.T) {
	base := pgtest.ConnString(t)
	bouncer := os.Getenv("SHOAL_TEST_PGBOUNCER")
	for _, tc := range []struct {
		name, connString string
		check            func(error) bool
	}{
		{"unknown role", strings.Replace(base, "shoal:", "shoal_no_such_role:", 1), func(err error) bool {
			var pgErr *pgconn.PgError
			return errors.As(err, &pgErr) && strings.HasPrefix(pgErr.Code, "28")
		}},
		{"certificate rejected", strings.Replace(base, "sslmode=disable", "sslmode=verify-full", 1), func(err error) bool {
			return strings.Contains(err.Error(), "certificate")
		}},
		{"TLS refused", strings.Replace(bouncer, "sslmode=disable", "sslmode=require", 1), func(err error) bool {
			return strings.Contains(err.Error(), "refused TLS")
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			switch {
			case tc.connString == "" && os.Getenv("SHOAL_REQUIRE_SERVICES") == "1":
				t.Fatal("SHOAL_TEST_PGBOUNCER is not set and SHOAL_REQUIRE_SERVICES=1")
			case tc.connString == "":
				t.Skip("SHOAL_TEST_PGBOUNCER is not set")
			}
			cfg, err := ParseConfig(tc.connString)
			if err != nil {
				t.Fatal(err)
			}
			log := &warnLog{}
			cfg.MaxConns, cfg.Logger = 2, slog.New(log)
			p := newPoolFor(t, cfg)
			for i := range 2 {
				err := p.Ping(pgtest.Ctx(t))
				if !errors.Is(err, shoal.ErrPermanent) || !tc.check(err) {
					t.Fatalf("Ping %d: %v, want the %s, marked permanent", i, err, tc.name)
				}
			}
			if s := p.Stat().Shoal(); s.Dials > 1 {
				t.Errorf("%d dials for two Pings, want 1: a permanent refusal is not retried at once", s.Dials)
			}
			if lines := log.get(); len(lines) != 1 || lines[0] != "shoal: dial failed permanent" {
				t.Errorf("Warn lines %q, want one \"shoal: dial failed\" with permanent=true", lines)
			}
		})
	}
}
