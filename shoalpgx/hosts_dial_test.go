package shoalpgx

import (
	"context"
	"net"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/internal/pgpair"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// The dial through several hosts (hosts_dial.go), each host a proxy in
// front of the test server that the test can make refuse or fall silent.
// The pools here wait an hour for a host before trying the next (the
// stagger), so that whenever the next host is tried, it is for the reason
// under test, however slow the machine.

// testServerAddr is the test server's host:port.
func testServerAddr(t *testing.T) string {
	t.Helper()
	cfg, err := ParseConfig(pgtest.ConnString(t))
	if err != nil {
		t.Fatal(err)
	}
	return hostAddr(cfg.ConnConfig)
}

// hostProxy is a proxy in front of the test server, closed at cleanup.
func hostProxy(t *testing.T) *pgpair.Proxy {
	t.Helper()
	p, err := pgpair.NewProxy(testServerAddr(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	return p
}

// hostsPool opens a pool on the test server's database as its string
// names it, with extra appended, whose hosts are addrs in order, and which
// waits stagger for a host before it tries the next as well. mutate, when
// not nil, changes its Config first.
func hostsPool(t *testing.T, extra string, stagger time.Duration, mutate func(*Config), addrs ...string) *Pool {
	t.Helper()
	cfg, err := ParseConfig(pgtest.ConnString(t) + extra)
	if err != nil {
		t.Fatal(err)
	}
	setHosts(t, cfg, addrs...)
	if mutate != nil {
		mutate(cfg)
	}
	p := newPoolFor(t, cfg)
	p.stagger = stagger
	return p
}

// setHosts makes addrs, in order, cfg's hosts.
func setHosts(t *testing.T, cfg *Config, addrs ...string) {
	t.Helper()
	cc := cfg.ConnConfig
	cc.Fallbacks = nil
	for i, a := range addrs {
		host, port, err := net.SplitHostPort(a)
		if err != nil {
			t.Fatal(err)
		}
		n, err := strconv.ParseUint(port, 10, 16)
		if err != nil {
			t.Fatal(err)
		}
		if i == 0 {
			cc.Host, cc.Port = host, uint16(n)
			continue
		}
		cc.Fallbacks = append(cc.Fallbacks, &pgconn.FallbackConfig{Host: host, Port: uint16(n), TLSConfig: cc.TLSConfig})
	}
}

// dialCtx bounds one test's dial: far beyond a dial's few milliseconds, far
// short of the hour a host is waited for.
func dialCtx(t *testing.T) context.Context {
	ctx, cancel := context.WithTimeout(pgtest.Ctx(t), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// triedOnlyFirst opens two connections on p, holding both, so that the
// second is a dial of its own, and fails t unless the first dial tried
// host (named first) and the second did not: what it learnt of host, said
// by why, put host last.
func triedOnlyFirst(t *testing.T, ctx context.Context, p *Pool, host *pgpair.Proxy, why string) {
	t.Helper()
	c1, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c1.Release)
	tried := host.Accepted()
	if tried == 0 {
		t.Fatalf("the first dial never tried %s, named first", host.Addr())
	}
	c2, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c2.Release)
	if n := host.Accepted(); n != tried {
		t.Fatalf("the second dial tried %s first again, which %s (%d connections, then %d)", host.Addr(), why, tried, n)
	}
}

// waitForAcquireOn waits until an acquire from p lands on addr, with role
// unless that is "".
func waitForAcquireOn(t *testing.T, ctx context.Context, p *Pool, addr, role string) {
	t.Helper()
	pgtest.WaitFor(t, 10*time.Second, "an acquire on "+addr, func() bool {
		c, err := p.Acquire(ctx)
		if err != nil {
			return false
		}
		defer c.Release()
		a, r := c.Host()
		return a == addr && (role == "" || r == role)
	})
}

// A host that fails passes the dial to the next one at once, not after
// its stagger; the failure is the host's LastError.
func TestDialTriesTheNextHostAtOnceWhenOneFails(t *testing.T) {
	down := hostProxy(t)
	down.Refuse(true)
	p := hostsPool(t, "", time.Hour, nil, down.Addr(), testServerAddr(t))
	if err := p.Ping(dialCtx(t)); err != nil {
		t.Fatalf("with the first host down: %v", err)
	}
	if down.Accepted() == 0 {
		t.Fatal("the host that was down was never tried")
	}
	if h := hostStat(t, p.Hosts(), down.Addr()); h.LastError == "" {
		t.Errorf("%s: no LastError after its dial failed", h.Addr)
	}
}

// A host whose last dial failed is tried after the others, so that a dead
// host costs each dial nothing once it has failed one.
func TestDialTriesAFailedHostLast(t *testing.T) {
	down := hostProxy(t)
	down.Refuse(true)
	p := hostsPool(t, "", time.Hour, func(c *Config) { c.MaxConns = 2 }, down.Addr(), testServerAddr(t))
	triedOnlyFirst(t, dialCtx(t), p, down, "failed the first")
}

// Once a host that failed answers again, its turn comes when the others
// fail, in the same dial, and a dial that reaches it clears its LastError.
func TestDialClearsLastErrorOfAHostThatAnswersAgain(t *testing.T) {
	ctx := dialCtx(t)
	a, b := hostProxy(t), hostProxy(t)
	a.Refuse(true)
	p := hostsPool(t, "", time.Hour, func(c *Config) { c.MaxConns = 2 }, a.Addr(), b.Addr())
	c1, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Release()
	if h := hostStat(t, p.Hosts(), a.Addr()); h.LastError == "" {
		t.Fatalf("%s: no LastError after its dial failed", h.Addr)
	}
	a.Refuse(false)
	b.Refuse(true)
	c2, err := p.Acquire(ctx)
	if err != nil {
		t.Fatalf("with the second host down and the first back: %v", err)
	}
	defer c2.Release()
	if addr, _ := c2.Host(); addr != a.Addr() {
		t.Fatalf("the second connection is on %s, want %s", addr, a.Addr())
	}
	ha, hb := hostStat(t, p.Hosts(), a.Addr()), hostStat(t, p.Hosts(), b.Addr())
	if ha.LastError != "" || ha.Role != RolePrimary {
		t.Errorf("%s answered: LastError %q, role %q; want none and %q", ha.Addr, ha.LastError, ha.Role, RolePrimary)
	}
	if hb.LastError == "" {
		t.Errorf("%s: no LastError after its dial failed", hb.Addr)
	}
}

// A host that answers after another already won the dial has its
// connection closed: the server keeps no session the pool does not hold,
// and the hosts' Open counts only the winner.
func TestDialClosesTheConnectionThatLosesTheRace(t *testing.T) {
	a, b := hostProxy(t), hostProxy(t)
	app := pgtest.AppName(t)
	p := hostsPool(t, "&application_name="+app, time.Nanosecond, nil, a.Addr(), b.Addr())
	if err := p.Ping(dialCtx(t)); err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, 10*time.Second, "both hosts dialled", func() bool { return a.Accepted() > 0 && b.Accepted() > 0 })
	admin := pgtest.AdminConn(t)
	var sessions int
	pgtest.WaitFor(t, 10*time.Second, "one session left on the server", func() bool {
		err := admin.QueryRow(context.Background(), "SELECT count(*) FROM pg_stat_activity WHERE application_name = $1", app).Scan(&sessions)
		return err == nil && sessions == 1
	})
	open := 0
	for _, h := range p.Hosts() {
		open += h.Open
	}
	if open != 1 {
		t.Fatalf("the hosts count %d open connections, want 1: %+v", open, p.Hosts())
	}
}

// HostConnectTimeout bounds a silent host's part of a dial, which then
// goes on to the next host.
func TestHostConnectTimeoutBoundsASilentHost(t *testing.T) {
	silent := hostProxy(t)
	silent.Silence()
	p := hostsPool(t, "", time.Hour, func(c *Config) { c.HostConnectTimeout = 300 * time.Millisecond }, silent.Addr(), testServerAddr(t))
	if err := p.Ping(dialCtx(t)); err != nil {
		t.Fatalf("with the first host silent: %v", err)
	}
	if h := hostStat(t, p.Hosts(), silent.Addr()); !strings.Contains(h.LastError, "timeout") {
		t.Errorf("%s: LastError %q, want its timeout", h.Addr, h.LastError)
	}
}

// A connect_timeout in the string bounds each host instead of
// HostConnectTimeout, as pgx and libpq apply it.
func TestConnectTimeoutTakesPrecedenceOverHostConnectTimeout(t *testing.T) {
	silent := hostProxy(t)
	silent.Silence()
	p := hostsPool(t, "&connect_timeout=1", time.Hour, func(c *Config) { c.HostConnectTimeout = time.Hour }, silent.Addr(), testServerAddr(t))
	if err := p.Ping(dialCtx(t)); err != nil {
		t.Fatalf("with the first host silent and connect_timeout=1: %v", err)
	}
}

// With read-write, a host that did not qualify at its last look (a
// standby) is tried after the others, so that after a failover the old
// primary costs the dials to the new one nothing.
func TestDialTriesAHostThatDidNotQualifyLast(t *testing.T) {
	pair := pgpair.ForTest(t)
	ctx := dialCtx(t)
	standby, err := pgpair.NewProxy(pair.Standby.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { standby.Close() })
	cfg, err := ParseConfig(pair.HA)
	if err != nil {
		t.Fatal(err)
	}
	setHosts(t, cfg, standby.Addr(), pair.Primary.Addr)
	cfg.MaxConns = 2
	p := newPoolFor(t, cfg)
	p.stagger = time.Hour
	triedOnlyFirst(t, ctx, p, standby, "is a standby")
	if h := hostStat(t, p.Hosts(), standby.Addr()); h.Role != RoleStandby {
		t.Fatalf("%s: role %q, want %q", h.Addr, h.Role, RoleStandby)
	}
}

// With read-only, a primary fenced read-only qualifies as libpq has it
// (its sessions refuse writes; it is not in recovery). Once the fence is
// lifted, the acquire that looks at the host again closes the connection
// it took, the next dial goes to the standby without trying the primary
// first (its last look found it writable), and a connection held there
// closes when released.
func TestReadOnlyTargetFollowsALiftedFence(t *testing.T) {
	pair := pgpair.ForTest(t)
	ctx := dialCtx(t)
	if err := pair.SetReadOnly(ctx, pair.Primary, true); err != nil {
		t.Fatal(err)
	}
	fenced := true
	t.Cleanup(func() {
		if fenced {
			_ = pair.SetReadOnly(context.Background(), pair.Primary, false)
		}
	})
	primary, err := pgpair.NewProxy(pair.Primary.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { primary.Close() })
	cfg, err := ParseConfig(haString(t, pair, "read-only"))
	if err != nil {
		t.Fatal(err)
	}
	setHosts(t, cfg, primary.Addr(), pair.Standby.Addr)
	cfg.MaxConns, cfg.RoleCheckPeriod = 2, 20*time.Millisecond
	p := newPoolFor(t, cfg)
	p.stagger = time.Hour

	held, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release()
	if addr, role := held.Host(); addr != primary.Addr() || role != RoleReadOnly {
		t.Fatalf("with the primary fenced, the connection is on %s (%s), want %s (%s)", addr, role, primary.Addr(), RoleReadOnly)
	}
	idle, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	idle.Release()
	dials := primary.Accepted()

	if err := pair.SetReadOnly(ctx, pair.Primary, false); err != nil {
		t.Fatal(err)
	}
	fenced = false
	waitForAcquireOn(t, ctx, p, pair.Standby.Addr, "")
	if n := primary.Accepted(); n != dials {
		t.Errorf("the dial after the look tried the writable primary first (%d connections, then %d)", dials, n)
	}
	held.Release()
	pgtest.WaitFor(t, 5*time.Second, "the held connection closed on release", func() bool {
		return hostStat(t, p.Hosts(), primary.Addr()).Open == 0
	})
}

// With one host and a target other than any, the pool dials the host
// itself, as with several, so that it knows the host's role: also with
// read-write, whose pool does not look at its hosts again at acquire.
func TestSingleHostTargetKnowsTheRole(t *testing.T) {
	pair := pgpair.ForTest(t)
	for _, c := range []struct {
		attrs, role string
		node        pgpair.Node
	}{
		{"standby", RoleStandby, pair.Standby},
		{"read-write", RolePrimary, pair.Primary},
	} {
		cfg, err := ParseConfig(haString(t, pair, c.attrs))
		if err != nil {
			t.Fatal(err)
		}
		setHosts(t, cfg, c.node.Addr)
		p := newPoolFor(t, cfg)
		conn, err := p.Acquire(dialCtx(t))
		if err != nil {
			t.Fatal(err)
		}
		addr, role := conn.Host()
		conn.Release()
		if addr != c.node.Addr || role != c.role {
			t.Errorf("%s: Conn.Host() = %s, %s; want %s, %s", c.attrs, addr, role, c.node.Addr, c.role)
		}
		if h := hostStat(t, p.Hosts(), c.node.Addr); h.Role != c.role || h.Open != 1 {
			t.Errorf("%s: %s has role %q, %d open; want %q, 1", c.attrs, h.Addr, h.Role, h.Open, c.role)
		}
	}
}
