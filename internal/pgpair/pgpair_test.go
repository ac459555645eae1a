package pgpair

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// connect opens a connection to cs bounded by a few seconds; the test
// closes it.
func connect(t *testing.T, cs string) *pgx.Conn {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, cs)
	if err != nil {
		t.Fatalf("connect: %v", err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		defer cancel()
		c.Close(ctx)
	})
	return c
}

func mustExec(t *testing.T, c *pgx.Conn, sql string, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if _, err := c.Exec(ctx, sql, args...); err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
}

func count(t *testing.T, c *pgx.Conn, marker string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	var n int
	if err := c.QueryRow(ctx, "SELECT count(*) FROM pgpair_marks WHERE mark = $1", marker).Scan(&n); err != nil {
		t.Fatalf("count %s: %v", marker, err)
	}
	return n
}

// mark is a value no earlier run wrote.
func mark(t *testing.T) string { return fmt.Sprintf("%s-%d", t.Name(), time.Now().UnixNano()) }

// serverPort is the port of the server c is connected to.
func serverPort(t *testing.T, c *pgx.Conn) int {
	t.Helper()
	var port int
	if err := c.QueryRow(context.Background(), "SELECT inet_server_port()").Scan(&port); err != nil {
		t.Fatal(err)
	}
	return port
}

const createMarks = "CREATE TABLE IF NOT EXISTS pgpair_marks (mark text NOT NULL)"

// A healthy pair: the primary writes, the standby applies its commits
// before they return (synchronous_commit=remote_apply) and refuses writes
// with read_only_sql_transaction, and the multi-host string reaches the
// primary.
func TestPairReplicatesSynchronously(t *testing.T) {
	p := ForTest(t)
	primary := connect(t, p.Primary.ConnString)
	mustExec(t, primary, createMarks)
	m := mark(t)
	mustExec(t, primary, "SET synchronous_commit = remote_apply")
	mustExec(t, primary, "INSERT INTO pgpair_marks VALUES ($1)", m)

	standby := connect(t, p.Standby.ConnString)
	if n := count(t, standby, m); n != 1 {
		t.Fatalf("the standby has %d rows of a commit the primary acknowledged under remote_apply, want 1", n)
	}
	_, err := standby.Exec(context.Background(), "INSERT INTO pgpair_marks VALUES ($1)", m)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "25006" {
		t.Fatalf("a write on the standby: %v, want SQLSTATE 25006", err)
	}
	if got := serverPort(t, connect(t, p.HA)); fmt.Sprint(got) != p.Primary.Port {
		t.Fatalf("the HA string reached port %d, want the primary's %s", got, p.Primary.Port)
	}
}

// Promote makes the standby write; Rebuild makes it a standby of the
// primary again, a fresh copy without what it wrote while promoted.
func TestPromoteThenRebuild(t *testing.T) {
	p := ForTest(t)
	mustExec(t, connect(t, p.Primary.ConnString), createMarks)
	ctx := context.Background()
	if err := p.Promote(ctx, p.Standby); err != nil {
		t.Fatal(err)
	}
	if r, err := InRecovery(ctx, p.Standby); err != nil || r {
		t.Fatalf("after Promote the standby is in recovery: %v, %v", r, err)
	}
	if p.Healthy(ctx) == nil {
		t.Fatal("Healthy says nothing is wrong with a promoted standby")
	}
	m := mark(t)
	promoted := connect(t, p.Standby.ConnString)
	mustExec(t, promoted, "INSERT INTO pgpair_marks VALUES ($1)", m)
	promoted.Close(ctx)

	if err := p.Rebuild(ctx); err != nil {
		t.Fatal(err)
	}
	if err := p.Healthy(ctx); err != nil {
		t.Fatalf("after Rebuild: %v", err)
	}
	if r, err := InRecovery(ctx, p.Standby); err != nil || !r {
		t.Fatalf("after Rebuild the standby is not in recovery: %v, %v", r, err)
	}
	if n := count(t, connect(t, p.Standby.ConnString), m); n != 0 {
		t.Fatalf("the rebuilt standby still has %d rows written while it was promoted", n)
	}
}

// Stop refuses connections at the stopped server, so the read-write
// multi-host string finds no host; Start brings it back and the standby
// streams from it again.
func TestStopStart(t *testing.T) {
	p := ForTest(t)
	ctx := context.Background()
	if err := p.Stop(ctx, p.Primary, Immediate); err != nil {
		t.Fatal(err)
	}
	dctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if c, err := pgx.Connect(dctx, p.Primary.ConnString); err == nil {
		c.Close(ctx)
		t.Fatal("connected to a stopped primary")
	}
	if c, err := pgx.Connect(dctx, p.HA); err == nil {
		port := serverPort(t, c)
		c.Close(ctx)
		t.Fatalf("the read-write HA string connected (to port %d) with the primary stopped", port)
	}
	if err := p.Start(ctx, p.Primary); err != nil {
		t.Fatal(err)
	}
	// The standby retries its stream every few seconds (wal_retrieve_retry_interval).
	deadline := time.Now().Add(20 * time.Second)
	for {
		err := p.Healthy(ctx)
		if err == nil {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the pair is not healthy 20s after the primary came back: %v", err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// Through a Proxy a connection works until Silence; after it, a query on an
// open connection gets no answer and no close, only its deadline, and so
// does a new connection's startup.
func TestProxySilence(t *testing.T) {
	p := ForTest(t)
	proxy, err := NewProxy(p.Primary.Addr)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	cs, err := ReplaceHost(p.Primary.ConnString, p.Primary.Addr, proxy.Addr())
	if err != nil {
		t.Fatal(err)
	}
	c := connect(t, cs)
	if got := serverPort(t, c); fmt.Sprint(got) != p.Primary.Port {
		t.Fatalf("through the proxy: port %d, want %s", got, p.Primary.Port)
	}

	proxy.Silence()
	const wait = 300 * time.Millisecond
	ctx, cancel := context.WithTimeout(context.Background(), wait)
	start := time.Now()
	_, err = c.Exec(ctx, "SELECT 1")
	cancel()
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("a query through the silent proxy: %v, want its deadline", err)
	}
	if took := time.Since(start); took < wait {
		t.Fatalf("a query through the silent proxy failed after %v, before its deadline", took)
	}

	ctx, cancel = context.WithTimeout(context.Background(), wait)
	defer cancel()
	nc, err := pgx.Connect(ctx, cs)
	if err == nil {
		nc.Close(context.Background())
		t.Fatal("connected through the silent proxy")
	}
	if !errors.Is(err, context.DeadlineExceeded) && !strings.Contains(err.Error(), "timeout") {
		t.Fatalf("a connect through the silent proxy: %v, want a timeout", err)
	}

	// A raw dial is accepted and then neither answered nor closed.
	raw, err := net.DialTimeout("tcp", proxy.Addr(), time.Second)
	if err != nil {
		t.Fatalf("the silent proxy refused a dial: %v", err)
	}
	raw.SetReadDeadline(time.Now().Add(wait))
	if _, err := raw.Read(make([]byte, 1)); !errors.Is(err, context.DeadlineExceeded) && !isTimeout(err) {
		t.Fatalf("a read from the silent proxy: %v, want a timeout", err)
	}
	raw.Close()

	if err := proxy.Close(); err != nil {
		t.Fatal(err)
	}
	if d, err := net.DialTimeout("tcp", proxy.Addr(), time.Second); err == nil {
		d.Close()
		t.Fatal("a closed proxy still accepts")
	}
}

// While Refuse is on, a Proxy closes each new connection at once, and
// Accepted counts it; once off, it forwards again. No pair is needed: the
// upstream is a listener of the test's own that answers each connection
// with one byte.
func TestProxyRefuse(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			c.Write([]byte{'!'})
			c.Close()
		}
	}()
	proxy, err := NewProxy(ln.Addr().String())
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	read := func() (byte, error) {
		c, err := net.DialTimeout("tcp", proxy.Addr(), time.Second)
		if err != nil {
			return 0, err
		}
		defer c.Close()
		c.SetReadDeadline(time.Now().Add(5 * time.Second))
		b := make([]byte, 1)
		_, err = io.ReadFull(c, b)
		return b[0], err
	}
	if b, err := read(); err != nil || b != '!' {
		t.Fatalf("through the proxy: %q, %v; want the upstream's byte", b, err)
	}
	proxy.Refuse(true)
	if _, err := read(); !errors.Is(err, io.EOF) && !errors.Is(err, syscall.ECONNRESET) {
		t.Fatalf("through the refusing proxy: %v, want the connection closed", err)
	}
	proxy.Refuse(false)
	if b, err := read(); err != nil || b != '!' {
		t.Fatalf("through the proxy after Refuse(false): %q, %v; want the upstream's byte", b, err)
	}
	if n := proxy.Accepted(); n != 3 {
		t.Fatalf("Accepted: %d, want 3", n)
	}
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

func TestReplaceHost(t *testing.T) {
	got, err := ReplaceHost("postgres://u:pw@127.0.0.1:5441,127.0.0.1:5442/db?x=1", "127.0.0.1:5441", "127.0.0.1:9999")
	if err != nil {
		t.Fatal(err)
	}
	if want := "postgres://u:pw@127.0.0.1:9999,127.0.0.1:5442/db?x=1"; got != want {
		t.Fatalf("got %s, want %s", got, want)
	}
	_, err = ReplaceHost("postgres://u:pw@127.0.0.1:5441/db", "127.0.0.1:1", "127.0.0.1:2")
	if err == nil || strings.Contains(err.Error(), "pw") {
		t.Fatalf("a host that is not there: %v, want an error without the password", err)
	}
}

func TestNewProxyRefusesOtherHosts(t *testing.T) {
	if p, err := NewProxy("192.0.2.1:5432"); err == nil {
		p.Close()
		t.Fatal("a proxy to a non-loopback address")
	}
}

// SetReadOnly fences the primary for the sessions it already has, from
// their next statement, and Restore (through Healthy) lifts it.
func TestSetReadOnly(t *testing.T) {
	p := ForTest(t)
	c := connect(t, p.Primary.ConnString)
	mustExec(t, c, createMarks)
	ctx := context.Background()
	if err := p.SetReadOnly(ctx, p.Primary, true); err != nil {
		t.Fatal(err)
	}
	_, err := c.Exec(ctx, "INSERT INTO pgpair_marks VALUES ($1)", mark(t))
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "25006" {
		t.Fatalf("a write on an open session of the fenced primary: %v, want SQLSTATE 25006", err)
	}
	if p.Healthy(ctx) == nil {
		t.Fatal("Healthy says nothing is wrong with a read-only primary")
	}
	if err := p.Restore(ctx); err != nil {
		t.Fatal(err)
	}
	mustExec(t, c, "INSERT INTO pgpair_marks VALUES ($1)", mark(t))
}

// After a failover the old primary comes back as a standby of the new one:
// it has what the new primary wrote and refuses writes.
func TestPromoteThenRejoin(t *testing.T) {
	p := ForTest(t)
	ctx := context.Background()
	mustExec(t, connect(t, p.Primary.ConnString), createMarks)
	if err := p.Promote(ctx, p.Standby); err != nil {
		t.Fatal(err)
	}
	m := mark(t)
	mustExec(t, connect(t, p.Standby.ConnString), "INSERT INTO pgpair_marks VALUES ($1)", m)
	if err := p.Rejoin(ctx, p.Primary); err != nil {
		t.Fatal(err)
	}
	if r, err := InRecovery(ctx, p.Primary); err != nil || !r {
		t.Fatalf("after Rejoin the old primary is not in recovery: %v, %v", r, err)
	}
	old := connect(t, p.Primary.ConnString)
	deadline := time.Now().Add(10 * time.Second)
	for count(t, old, m) != 1 {
		if time.Now().After(deadline) {
			t.Fatal("the rejoined standby does not have the new primary's write after 10s")
		}
		time.Sleep(100 * time.Millisecond)
	}
	_, err := old.Exec(ctx, "INSERT INTO pgpair_marks VALUES ($1)", m)
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "25006" {
		t.Fatalf("a write on the rejoined standby: %v, want SQLSTATE 25006", err)
	}
}
