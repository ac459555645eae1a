package shoalpgx

import (
	"context"
	"errors"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgpair"
)

// haString is the pair's multi-host string with target_session_attrs set
// to attrs and the extra settings appended.
func haString(t *testing.T, pair *pgpair.Pair, attrs string, extra ...string) string {
	t.Helper()
	cs := strings.Replace(pair.HA, "target_session_attrs=read-write", "target_session_attrs="+attrs, 1)
	if !strings.Contains(cs, "target_session_attrs="+attrs) {
		t.Fatalf("no target_session_attrs=read-write to replace in the HA string")
	}
	for _, e := range extra {
		cs += "&" + e
	}
	return cs
}

// rowQuerier is what serverPort queries: a Pool, a ReadPool, a Conn.
type rowQuerier interface {
	QueryRow(context.Context, string, ...any) pgx.Row
}

// serverPort runs inet_server_port() through q: the port of the server
// the statement ran on.
func serverPort(t *testing.T, q rowQuerier) string {
	t.Helper()
	port, err := tryPort(q)
	if err != nil {
		t.Fatalf("a query: %v", err)
	}
	return port
}

// tryPort is serverPort for a query that may fail, bounded by 2s.
func tryPort(q rowQuerier) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	var port int
	err := q.QueryRow(ctx, "SELECT inet_server_port()").Scan(&port)
	return strconv.Itoa(port), err
}

// hostStat returns the pool's HostStat for addr.
func hostStat(t *testing.T, hosts []HostStat, addr string) HostStat {
	t.Helper()
	for _, h := range hosts {
		if h.Addr == addr {
			return h
		}
	}
	t.Fatalf("no host %s in %+v", addr, hosts)
	return HostStat{}
}

// Each of libpq's target_session_attrs picks the host libpq would on a
// healthy pair (the primary first in the string, its standby second), and
// the pool records which host its connection is on and what role each
// host had.
func TestTargetSessionAttrs(t *testing.T) {
	pair := pgpair.ForTest(t)
	for _, c := range []struct {
		attrs string
		want  pgpair.Node
	}{
		{"any", pair.Primary},
		{"read-write", pair.Primary},
		{"primary", pair.Primary},
		{"read-only", pair.Standby},
		{"standby", pair.Standby},
		{"prefer-standby", pair.Standby},
	} {
		t.Run(c.attrs, func(t *testing.T) {
			pool, err := New(context.Background(), haString(t, pair, c.attrs))
			if err != nil {
				t.Fatal(err)
			}
			defer pool.Close()
			if got := serverPort(t, pool); got != c.want.Port {
				t.Fatalf("target_session_attrs=%s ran on port %s, want %s", c.attrs, got, c.want.Port)
			}
			conn, err := pool.Acquire(context.Background())
			if err != nil {
				t.Fatal(err)
			}
			addr, role := conn.Host()
			conn.Release()
			h := hostStat(t, pool.Hosts(), c.want.Addr)
			if h.Open != 1 {
				t.Errorf("%s: Open %d, want 1", h.Addr, h.Open)
			}
			wantRole := RolePrimary
			if c.want == pair.Standby {
				wantRole = RoleStandby
			}
			if h.Role != wantRole || h.LastCheck.IsZero() {
				t.Errorf("%s: role %q checked at %v, want %q and a time", h.Addr, h.Role, h.LastCheck, wantRole)
			}
			if addr != c.want.Addr || role != wantRole {
				t.Errorf("Conn.Host() = %s, %s; want %s, %s", addr, role, c.want.Addr, wantRole)
			}
			pool.Close()
			for _, h := range pool.Hosts() {
				if h.Open != 0 {
					t.Errorf("after Close, %s has %d open", h.Addr, h.Open)
				}
			}
		})
	}
}

// load_balance_hosts=random spreads the pool's connections over the hosts
// that qualify, and is not sent to the server as a run-time parameter
// (which PostgreSQL would refuse).
func TestLoadBalanceHostsRandom(t *testing.T) {
	pair := pgpair.ForTest(t)
	cfg, err := ParseConfig(haString(t, pair, "any", "load_balance_hosts=random", "pool_min_conns=16", "pool_max_conns=16"))
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := cfg.ConnConfig.RuntimeParams["load_balance_hosts"]; ok {
		t.Fatal("load_balance_hosts is left among the run-time parameters")
	}
	pool, err := NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		hosts := pool.Hosts()
		p, s := hostStat(t, hosts, pair.Primary.Addr), hostStat(t, hosts, pair.Standby.Addr)
		if p.Open+s.Open == 16 {
			// Each of 16 dials picks a host at random: all on one host
			// happens once in 2^15 runs.
			if p.Open == 0 || s.Open == 0 {
				t.Fatalf("16 connections, %d on the primary and %d on the standby: not spread", p.Open, s.Open)
			}
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("MinConns 16 not open after 10s: %+v", hosts)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// Hosts that do not qualify, do not resolve or refuse: the error names
// each and what it answered, and not the password.
func TestNoHostQualifiesSaysWhy(t *testing.T) {
	pair := pgpair.ForTest(t)
	cs, err := pgpair.ReplaceHost(haString(t, pair, "standby"), pair.Standby.Addr, "nosuch.invalid:5442")
	if err != nil {
		t.Fatal(err)
	}
	pool, err := New(context.Background(), cs)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	err = pool.Ping(ctx)
	if err == nil {
		t.Fatal("a ping reached a standby, with none in the string")
	}
	msg := err.Error()
	for _, want := range []string{pair.Primary.Addr, "server is not a standby", "nosuch.invalid"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "shoal-secret") {
		t.Errorf("the error holds the password: %s", msg)
	}
	h := hostStat(t, pool.Hosts(), "nosuch.invalid:5442")
	if !strings.Contains(h.LastError, "nosuch.invalid") || strings.Contains(h.LastError, "shoal-secret") {
		t.Errorf("the unresolvable host's LastError: %q", h.LastError)
	}
}

// A bad load_balance_hosts names the key; the read pool's settings parse.
func TestParseHostSettings(t *testing.T) {
	_, err := ParseConfig("postgres://u:pw@h1,h2/db?load_balance_hosts=sometimes")
	var ce *ConfigError
	if !errors.As(err, &ce) || ce.Key != "load_balance_hosts" || !strings.Contains(err.Error(), `"sometimes"`) {
		t.Fatalf("load_balance_hosts=sometimes: %v", err)
	}
	cfg, err := ParseConfig("postgres://u:pw@h1,h2/db?load_balance_hosts=random&pool_max_standby_lag=1500ms&pool_read_max_conns=7")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.LoadBalanceHosts != LoadBalanceRandom || cfg.MaxStandbyLag != 1500*time.Millisecond || cfg.ReadMaxConns != 7 {
		t.Fatalf("parsed %q, %v, %d", cfg.LoadBalanceHosts, cfg.MaxStandbyLag, cfg.ReadMaxConns)
	}
	cfg.LoadBalanceHosts = "round-robin"
	if _, err := NewWithConfig(context.Background(), cfg); !errors.As(err, &ce) || ce.Key != "LoadBalanceHosts" {
		t.Fatalf("LoadBalanceHosts round-robin: %v", err)
	}
}
