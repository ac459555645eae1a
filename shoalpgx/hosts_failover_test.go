package shoalpgx

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/pgpair"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// silentPrimary returns the pair, promoted, and the read-write multi-host
// string whose first host is a proxy in front of the old primary that has
// gone silent: a dial that tries the hosts in order meets a host that
// accepts and never answers before one that would serve it.
func silentPrimary(t *testing.T) (*pgpair.Pair, string) {
	t.Helper()
	pair := pgpair.ForTest(t)
	proxy, err := pgpair.NewProxy(pair.Primary.Addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { proxy.Close() })
	cs, err := pgpair.ReplaceHost(pair.HA, pair.Primary.Addr, proxy.Addr())
	if err != nil {
		t.Fatal(err)
	}
	proxy.Silence()
	if err := pair.Promote(context.Background(), pair.Standby); err != nil {
		t.Fatal(err)
	}
	return pair, cs
}

// A dial whose first host is silent reaches the promoted standby, so a
// caller with 5s writes; with pgx's dial, host after host, and only the
// connect timeout (2 minutes by default), it would still be waiting on the
// first host when the caller's deadline passed. The pool dials several
// hosts itself whatever the target, target_session_attrs=any included:
// the standby is tried once the first host has had its 250ms, while the
// silent one's attempt goes on, bounded by HostConnectTimeout
// (TestFailoverDialStaggersHosts times the stagger).
func TestFailoverDialPassesSilentHost(t *testing.T) {
	pair, cs := silentPrimary(t)
	cs = strings.Replace(cs, "target_session_attrs=read-write", "target_session_attrs=any", 1)
	if !strings.Contains(cs, "target_session_attrs=any") {
		t.Fatalf("no target_session_attrs=read-write to replace in %s", pair.HA)
	}
	queryReachesStandby(t, pair, cs, 5*time.Second)
}

// queryReachesStandby opens a pool on cs and checks that a query given
// within runs on the (promoted) standby.
func queryReachesStandby(t *testing.T, pair *pgpair.Pair, cs string, within time.Duration) {
	t.Helper()
	pool, err := New(context.Background(), cs)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	defer cancel()
	var port int
	if err := pool.QueryRow(ctx, "SELECT inet_server_port()").Scan(&port); err != nil {
		t.Fatalf("a query with %v, the first host silent and the second promoted: %v", within, err)
	}
	if strconv.Itoa(port) != pair.Standby.Port {
		t.Fatalf("the query ran on port %d, want the promoted standby's %s", port, pair.Standby.Port)
	}
}

// A primary fenced read-only while the pool holds connections to it (as a
// cluster manager demoting it would), its standby promoted: the first write
// fails with read_only_sql_transaction, and the pool resets, so the writes
// after it reach the new primary. Without the reset they would go on
// failing on the pool's other connections to the old primary, which are
// healthy and would never be replaced.
func TestFailoverReadOnlyResets(t *testing.T) {
	pair := pgpair.ForTest(t)
	ctx := context.Background()
	pool := writersPool(t, pair, 4, 0) // no role check: this test is of the reset on a refused write
	// Open all four, on the primary, and leave them idle.
	pgtest.OpenIdle(t, pool.Acquire, 4)

	if err := pair.FenceAndPromote(ctx); err != nil {
		t.Fatal(err)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	_, err := pool.Exec(wctx, "INSERT INTO shoalpgx_failover VALUES (1)")
	pgpair.WantFencedWrite(t, err)
	pair.WantWritesOnStandby(t, "shoalpgx_failover", func(sql string, arg int, port *int) error {
		return pool.QueryRow(wctx, sql, arg).Scan(port)
	})
}

// Only a pool that asks for a writable host among several resets on
// SQLSTATE 25006: with one host there is nowhere else to go, and a pool
// that asks for a standby (or any host) expects read-only sessions.
func TestResetsOnReadOnly(t *testing.T) {
	cases := []struct {
		cs   string
		want bool
	}{
		{"postgres://u:pw@h1:5432,h2:5432/db?target_session_attrs=read-write", true},
		{"postgres://u:pw@h1:5432,h2:5432/db?target_session_attrs=primary", true},
		{"postgres://u:pw@h1:5432,h2:5432/db?target_session_attrs=any", false},
		{"postgres://u:pw@h1:5432,h2:5432/db", false},
		{"postgres://u:pw@h1:5432,h2:5432/db?target_session_attrs=read-only", false},
		{"postgres://u:pw@h1:5432,h2:5432/db?target_session_attrs=standby", false},
		{"postgres://u:pw@h1:5432,h2:5432/db?target_session_attrs=prefer-standby", false},
		{"postgres://u:pw@h1:5432/db?target_session_attrs=read-write", false},
	}
	for _, c := range cases {
		cfg, err := ParseConfig(c.cs)
		if err != nil {
			t.Fatal(err)
		}
		if got := resetsOnReadOnly(targetOf(cfg.ConnConfig.ValidateConnect), cfg.ConnConfig); got != c.want {
			t.Errorf("%s: resets on 25006 = %v, want %v", c.cs, got, c.want)
		}
	}
}

// A query stuck on a host gone silent fails at its deadline; pgx then
// closes the connection in the background, sending a cancel request to the
// same silent host (up to 15s). The connection's place under MaxConns must
// be free at once, so that a dial can pass the silent host and reach the
// promoted standby while the next caller still has time: here 4s, against
// HostConnectTimeout's 2s for the silent host. Waiting for pgx's cleanup
// (up to 5s) would spend that caller's time with nothing dialling.
func TestFailoverStuckConnFreesItsPlace(t *testing.T) {
	pair := pgpair.ForTest(t)
	proxy, err := pgpair.NewProxy(pair.Primary.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	cs, err := pgpair.ReplaceHost(pair.HA, pair.Primary.Addr, proxy.Addr())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cfg, err := ParseConfig(cs)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = 1
	pool, err := NewWithConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	if err := pool.Ping(ctx); err != nil {
		t.Fatal(err)
	}

	proxy.Silence()
	qctx, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	_, err = pool.Exec(qctx, "SELECT 1")
	cancel()
	if err == nil {
		t.Fatal("a query through the silent proxy succeeded")
	}
	if err := pair.Promote(ctx, pair.Standby); err != nil {
		t.Fatal(err)
	}
	qctx, cancel = context.WithTimeout(ctx, 4*time.Second)
	defer cancel()
	var port int
	if err := pool.QueryRow(qctx, "SELECT inet_server_port()").Scan(&port); err != nil {
		t.Fatalf("a query with 4s after the stuck one failed: %v", err)
	}
	if strconv.Itoa(port) != pair.Standby.Port {
		t.Fatalf("the query ran on port %d, want the promoted standby's %s", port, pair.Standby.Port)
	}
}

// With target_session_attrs=read-write a dial does not wait for a silent
// first host at all beyond hostStagger: it tries the next host too, and
// the promoted standby answers, so a caller with 1.5s, less than
// HostConnectTimeout, writes.
func TestFailoverDialStaggersHosts(t *testing.T) {
	pair, cs := silentPrimary(t)
	queryReachesStandby(t, pair, cs, 1500*time.Millisecond)
}

// With the primary stopped and the standby not promoted, no host
// qualifies: the error names every host and what it answered, and not the
// password.
func TestFailoverNoHostQualifies(t *testing.T) {
	pair := pgpair.ForTest(t)
	ctx := context.Background()
	if err := pair.Stop(ctx, pair.Primary, pgpair.Fast); err != nil {
		t.Fatal(err)
	}
	pool, err := New(ctx, pair.HA)
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	qctx, cancel := context.WithTimeout(ctx, 3*time.Second)
	defer cancel()
	_, err = pool.Exec(qctx, "SELECT 1")
	if err == nil {
		t.Fatal("a query succeeded with the primary stopped and the standby read-only")
	}
	msg := err.Error()
	for _, want := range []string{pair.Primary.Addr, "connection refused", pair.Standby.Addr, "server is a standby"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the error does not say %q: %s", want, msg)
		}
	}
	if strings.Contains(msg, "shoal-secret") {
		t.Errorf("the error holds the password: %s", msg)
	}
}

// A new connection that lands on another host than the pool's last one
// says the primary has moved (with read-write at most one host qualifies),
// so the pool resets before any write fails: here the old primary is
// fenced read-only with two of the pool's connections idle on it, and a
// third, dialled while those two are held, reaches the promoted standby.
// Without the reset the writes after it would take the two idle
// connections to the old primary and the first would fail with 25006.
func TestFailoverNewHostResets(t *testing.T) {
	pair := pgpair.ForTest(t)
	ctx := context.Background()
	pool := writersPool(t, pair, 4, 0) // no role check: this test is of the reset on a new host
	acquire := func() *Conn {
		t.Helper()
		c, err := pool.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	a, b := acquire(), acquire()
	a.Release()
	b.Release()

	if err := pair.FenceAndPromote(ctx); err != nil {
		t.Fatal(err)
	}
	a, b = acquire(), acquire() // the two idle ones, on the old primary
	c := acquire()              // a new one
	var port int
	if err := c.QueryRow(ctx, "SELECT inet_server_port()").Scan(&port); err != nil {
		t.Fatal(err)
	}
	if strconv.Itoa(port) != pair.Standby.Port {
		t.Fatalf("the new connection is on port %d, want the promoted standby's %s", port, pair.Standby.Port)
	}
	a.Release()
	b.Release()
	c.Release()

	// Three at once, so that the pool cannot serve them all from the one
	// connection released last.
	held := []*Conn{acquire(), acquire(), acquire()}
	defer func() {
		for _, c := range held {
			c.Release()
		}
	}()
	for i, c := range held {
		if err := c.QueryRow(ctx, "INSERT INTO shoalpgx_failover VALUES ($1) RETURNING inet_server_port()", i).Scan(&port); err != nil {
			t.Fatalf("write %d after the new connection: %v", i+1, err)
		}
		if strconv.Itoa(port) != pair.Standby.Port {
			t.Fatalf("write %d went to port %d, want the new primary's %s", i+1, port, pair.Standby.Port)
		}
	}
}

// A primary fenced read-only while the pool's connections to it sit idle,
// its standby promoted: the role check sees the fence and resets the pool
// before any write, so that not even the first write is refused. With the
// check off (RoleCheckPeriod 0), the first write fails with SQLSTATE 25006,
// as TestFailoverReadOnlyResets shows.
func TestFailoverRoleCheckResetsBeforeAWriteFails(t *testing.T) {
	pair := pgpair.ForTest(t)
	ctx := context.Background()
	pool := writersPool(t, pair, 2, 100*time.Millisecond)
	// Two connections on the primary, idle.
	a, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	b, err := pool.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	a.Release()
	b.Release()
	if n := pool.resets.Load(); n != 0 {
		t.Fatalf("%d resets before the fence, want 0", n)
	}

	if err := pair.FenceAndPromote(ctx); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for pool.resets.Load() == 0 {
		if time.Now().After(deadline) {
			t.Fatal("no reset 5s after the fence: the role check did not see it")
		}
		time.Sleep(20 * time.Millisecond)
	}
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	var port int
	if err := pool.QueryRow(wctx, "INSERT INTO shoalpgx_failover VALUES (1) RETURNING inet_server_port()").Scan(&port); err != nil {
		t.Fatalf("the first write after the fence and the reset: %v", err)
	}
	if strconv.Itoa(port) != pair.Standby.Port {
		t.Fatalf("the first write went to port %d, want the new primary's %s", port, pair.Standby.Port)
	}
}

// writersPool opens a pool on the pair's multi-host string with maxConns
// connections and the role check every roleCheck (0: off), closed when
// the test ends, and makes sure the table the failover tests write exists.
func writersPool(t *testing.T, pair *pgpair.Pair, maxConns int32, roleCheck time.Duration) *Pool {
	t.Helper()
	cfg, err := ParseConfig(pair.HA)
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns = maxConns
	cfg.RoleCheckPeriod = roleCheck
	pool, err := NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := pool.Exec(context.Background(), "CREATE TABLE IF NOT EXISTS shoalpgx_failover (n integer)"); err != nil {
		t.Fatal(err)
	}
	return pool
}

// With target_session_attrs=primary, a primary fenced read-only is still a
// primary (not in recovery), as in libpq: the look every RoleCheckPeriod
// leaves the pool on it, where a reset would only dial it again, each
// period.
func TestPrimaryTargetKeepsAFencedPrimary(t *testing.T) {
	pair := pgpair.ForTest(t)
	ctx := context.Background()
	if !strings.Contains(pair.HA, "target_session_attrs=read-write") {
		t.Fatal("the pair's string does not ask for read-write, to be asked for primary instead")
	}
	cfg, err := ParseConfig(strings.Replace(pair.HA, "target_session_attrs=read-write", "target_session_attrs=primary", 1))
	if err != nil {
		t.Fatal(err)
	}
	cfg.MaxConns, cfg.RoleCheckPeriod = 2, 50*time.Millisecond
	pool := newPoolFor(t, cfg)
	if err := pool.Ping(ctx); err != nil {
		t.Fatal(err)
	}
	if err := pair.SetReadOnly(ctx, pair.Primary, true); err != nil {
		t.Fatal(err)
	}
	looks := pool.Stat().AcquireCount()
	pgtest.WaitFor(t, 5*time.Second, "five looks at the fenced primary", func() bool { return pool.Stat().AcquireCount() >= looks+5 })
	if n := pool.resets.Load(); n != 0 {
		t.Fatalf("%d resets with the primary fenced, want none: it is still the primary", n)
	}
}
