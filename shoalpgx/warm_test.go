package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// backends counts the server's sessions with the test's application_name.
func backends(t *testing.T) int {
	t.Helper()
	var n int
	err := pgtest.AdminConn(t).QueryRow(pgtest.Ctx(t), "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", pgtest.AppName(t)).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// Warm returns with max(MinConns, MinIdleConns) sessions open at the
// server, and dials nothing when called again.
func TestWarmOpensTheFloor(t *testing.T) {
	for _, c := range []struct{ minConns, minIdle, want int32 }{
		{3, 0, 3},
		{1, 4, 4},
		{0, 0, 0},
	} {
		t.Run(fmt.Sprintf("MinConns=%d,MinIdleConns=%d", c.minConns, c.minIdle), func(t *testing.T) {
			p := newTestPool(t, func(cfg *Config) { cfg.MaxConns, cfg.MinConns, cfg.MinIdleConns = 5, c.minConns, c.minIdle })
			ctx := pgtest.Ctx(t)
			if err := p.Warm(ctx); err != nil {
				t.Fatalf("Warm: %v", err)
			}
			if n := backends(t); n != int(c.want) {
				t.Fatalf("%d sessions at the server after Warm, want %d", n, c.want)
			}
			if s := p.Stat(); s.TotalConns() != c.want || s.IdleConns() != c.want {
				t.Fatalf("after Warm: %d open, %d idle; want %d of each", s.TotalConns(), s.IdleConns(), c.want)
			}
			dials := p.Stat().Shoal().Dials
			if err := p.Warm(ctx); err != nil {
				t.Fatalf("Warm again: %v", err)
			}
			if got := p.Stat().Shoal().Dials; got != dials {
				t.Errorf("Warm with the floor met dialled %d more", got-dials)
			}
		})
	}
}

// A server that cannot be reached: Warm says how many connections opened
// of how many, wraps the dial's error, and shows no password.
func TestWarmDialError(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	ln.Close() // nothing listens there now: every dial is refused
	cfg, err := ParseConfig("postgres://app:warm-secret@" + addr + "/app?sslmode=disable&pool_min_conns=2")
	if err != nil {
		t.Fatal(err)
	}
	p := newPoolFor(t, cfg)
	err = p.Warm(pgtest.Ctx(t))
	if err == nil {
		t.Fatal("Warm with nothing listening returned nil")
	}
	var opErr *net.OpError
	if msg := err.Error(); !strings.HasPrefix(msg, fmt.Sprintf("shoalpgx pool %q: Warm: 0 of 2 connections open: ", addr+"/app")) || !strings.Contains(msg, addr) || !errors.As(err, &opErr) {
		t.Errorf("Warm's error %q (%T): want how many opened, the address, and the dial's error wrapped", msg, err)
	}
	if strings.Contains(err.Error(), "warm-secret") {
		t.Errorf("Warm's error shows the password: %v", err)
	}
}

// Warm returns when its context ends, with the context's error, while
// the dials hang; and on a closed pool with shoal.ErrClosed.
func TestWarmContextAndClose(t *testing.T) {
	cfg, proxy := proxiedConfig(t, func(c *Config) { c.MinConns = 2 })
	proxy.Hold()
	// Closed below, before the proxy stops; no goroutine check, which
	// would count the proxy's own.
	p, err := NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	ctx, cancel := context.WithTimeout(pgtest.Ctx(t), 100*time.Millisecond)
	defer cancel()
	err = p.Warm(ctx)
	if !errors.Is(err, context.DeadlineExceeded) || !strings.HasPrefix(err.Error(), fmt.Sprintf("shoalpgx pool %q: Warm: 0 of 2 connections open: ", p.Config().Name)) {
		t.Errorf("Warm with the dials hanging past its deadline: %v, want the deadline's error after how many opened", err)
	}
	p.Close()
	if err := p.Warm(pgtest.Ctx(t)); !errors.Is(err, shoal.ErrClosed) {
		t.Errorf("Warm on a closed pool: %v, want shoal.ErrClosed", err)
	}
}
