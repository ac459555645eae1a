package shoalpgx

import (
	"context"
	"errors"
	"slices"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/internal/pgpair"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// readsPool opens a pool on the pair's read-write string, with the role
// look every period and the extra settings, and returns it with its read
// pool.
func readsPool(t *testing.T, pair *pgpair.Pair, period time.Duration, extra ...string) (*Pool, *ReadPool) {
	t.Helper()
	cfg, err := ParseConfig(haString(t, pair, "read-write", extra...))
	if err != nil {
		t.Fatal(err)
	}
	cfg.RoleCheckPeriod = period
	pool, err := NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	if _, err := pool.Exec(context.Background(), "CREATE TABLE IF NOT EXISTS shoalpgx_reads (n integer)"); err != nil {
		t.Fatal(err)
	}
	return pool, pool.Reads()
}

// eventually polls cond every 20ms for up to d and fails with what when it
// never holds.
func eventually(t *testing.T, d time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(d)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v", what, d)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// sameHosts reports whether a and b list the same hosts with the same
// connections and roles (a background look may move LastCheck between two
// calls).
func sameHosts(a, b []HostStat) bool {
	return slices.EqualFunc(a, b, func(x, y HostStat) bool { return x.Addr == y.Addr && x.Open == y.Open && x.Role == y.Role })
}

// isReadOnlyRefusal reports whether err is SQLSTATE 25006.
func isReadOnlyRefusal(err error) bool {
	var pe *pgconn.PgError
	return errors.As(err, &pe) && pe.Code == "25006"
}

// Reads go to the standby, writes through the read pool are refused, by
// the API for a read-write transaction and by the server for the rest, and
// the pool's own statements still go to the primary.
func TestReadsGoToStandby(t *testing.T) {
	pair := pgpair.ForTest(t)
	pool, reads := readsPool(t, pair, time.Second)
	ctx := context.Background()
	if got := serverPort(t, reads); got != pair.Standby.Port {
		t.Fatalf("a read ran on port %s, want the standby's %s", got, pair.Standby.Port)
	}
	if got := serverPort(t, pool); got != pair.Primary.Port {
		t.Fatalf("the pool's query ran on port %s, want the primary's %s", got, pair.Primary.Port)
	}
	if _, err := reads.BeginTx(ctx, pgx.TxOptions{AccessMode: pgx.ReadWrite}); !errors.Is(err, errReadWriteTx) {
		t.Fatalf("BeginTx read-write on the read pool: %v", err)
	}
	tx, err := reads.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	_, err = tx.Exec(ctx, "INSERT INTO shoalpgx_reads VALUES (1)")
	_ = tx.Rollback(ctx)
	if !isReadOnlyRefusal(err) {
		t.Fatalf("a write in the read pool's transaction: %v, want SQLSTATE 25006", err)
	}
	// Each pool's Hosts counts its own connections: the pool's on the
	// primary, the read pool's on the standby, none of one in the other's.
	hosts := pool.Hosts()
	if p, s := hostStat(t, hosts, pair.Primary.Addr), hostStat(t, hosts, pair.Standby.Addr); p.Open < 1 || s.Open != 0 || p.Role != RolePrimary {
		t.Fatalf("the pool's hosts %+v: want its connections on the primary, role primary, and none on the standby", hosts)
	}
	if got := pool.Stat().Shoal().Hosts; !sameHosts(got, pool.Hosts()) {
		t.Errorf("the pool's Stat().Shoal().Hosts %+v, want its Hosts %+v", got, pool.Hosts())
	}
	hosts = reads.Hosts()
	if p, s := hostStat(t, hosts, pair.Primary.Addr), hostStat(t, hosts, pair.Standby.Addr); s.Open < 1 || p.Open != 0 || s.Role != RoleStandby {
		t.Fatalf("the read pool's hosts %+v: want its connections on the standby, role standby, and none on the primary", hosts)
	}
	if got := reads.Stat().Shoal().Hosts; !sameHosts(got, reads.Hosts()) {
		t.Errorf("the read pool's Stat().Shoal().Hosts %+v, want its Hosts %+v", got, reads.Hosts())
	}
}

// With the standby stopped reads go to the primary, still read-only; once
// it runs again the read pool moves back to it within a few role looks.
func TestReadsFallBackToPrimary(t *testing.T) {
	pair := pgpair.ForTest(t)
	_, reads := readsPool(t, pair, 100*time.Millisecond)
	ctx := context.Background()
	if got := serverPort(t, reads); got != pair.Standby.Port {
		t.Fatalf("a read ran on port %s, want the standby's %s", got, pair.Standby.Port)
	}
	if err := pair.Stop(ctx, pair.Standby, pgpair.Fast); err != nil {
		t.Fatal(err)
	}
	if got := serverPort(t, reads); got != pair.Primary.Port {
		t.Fatalf("with the standby stopped a read ran on port %s, want the primary's %s", got, pair.Primary.Port)
	}
	err := reads.QueryRow(ctx, "INSERT INTO shoalpgx_reads VALUES (2) RETURNING n").Scan(new(int))
	if !isReadOnlyRefusal(err) {
		t.Fatalf("a write through the read pool on the primary: %v, want SQLSTATE 25006", err)
	}
	if err := pair.Start(ctx, pair.Standby); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "reads back on the restarted standby", func() bool {
		port, err := tryPort(reads)
		return err == nil && port == pair.Standby.Port
	})
}

// A standby further behind than MaxStandbyLag takes no reads until it has
// caught up: its replay paused while the primary writes, reads move to the
// primary within a role look; resumed, they come back.
func TestReadsMaxStandbyLag(t *testing.T) {
	pair := pgpair.ForTest(t)
	pool, reads := readsPool(t, pair, 100*time.Millisecond, "pool_max_standby_lag=300ms")
	wantReadsOffTheLaggingStandby(t, pair, pool, reads, 3, "reads")
}

// wantReadsOffTheLaggingStandby checks that reads, with a
// pool_max_standby_lag of 300ms, run on the standby; pauses its replay
// and writes row through pool, a write the standby receives and does not
// replay, so that the age of its last replayed transaction counts as its
// lag; checks that reads move to the primary, then resumes replay and
// checks that they come back. what names the reads in its failures.
func wantReadsOffTheLaggingStandby(t *testing.T, pair *pgpair.Pair, pool *Pool, reads *ReadPool, row int, what string) {
	t.Helper()
	ctx := context.Background()
	if got := serverPort(t, reads); got != pair.Standby.Port {
		t.Fatalf("a read ran on port %s, want the standby's %s; hosts %+v", got, pair.Standby.Port, reads.Hosts())
	}
	if err := pair.PauseReplay(ctx, pair.Standby, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pair.PauseReplay(context.Background(), pair.Standby, false) })
	if _, err := pool.Exec(ctx, "INSERT INTO shoalpgx_reads VALUES ($1)", row); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, what+" off the lagging standby", func() bool {
		return serverPort(t, reads) == pair.Primary.Port
	})
	if s := hostStat(t, reads.Hosts(), pair.Standby.Addr); s.Lag <= 300*time.Millisecond {
		t.Errorf("the standby's lag reads %v, want more than the 300ms bound", s.Lag)
	}
	if err := pair.PauseReplay(ctx, pair.Standby, false); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, what+" back on the standby once it caught up", func() bool {
		return serverPort(t, reads) == pair.Standby.Port
	})
}

// A look that finds a standby further behind than MaxStandbyLag looks
// again and believes the second reading: right after a write on an idle
// primary the standby has WAL to replay for a moment, and the age of its
// last replayed transaction would read as lag. Here the first reading
// finds the paused standby behind, replay resumes and catches up before
// the second, and the read goes to the standby.
func TestReadsBelieveTheSecondLagReading(t *testing.T) {
	pair := pgpair.ForTest(t)
	pool, reads := readsPool(t, pair, 0, "pool_max_standby_lag=300ms", "pool_host_connect_timeout=30s")
	ctx := pgtest.Ctx(t)
	standby, err := pgx.Connect(ctx, pair.Standby.ConnString)
	if err != nil {
		t.Fatal(err)
	}
	defer standby.Close(context.Background())
	lag := func() time.Duration {
		r, err := readRole(ctx, standby.PgConn())
		if err != nil {
			t.Error(err)
		}
		return r.lag
	}
	if err := pair.PauseReplay(ctx, pair.Standby, true); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pair.PauseReplay(context.Background(), pair.Standby, false) })
	if _, err := pool.Exec(ctx, "INSERT INTO shoalpgx_reads VALUES (4)"); err != nil {
		t.Fatal(err)
	}
	pgtest.WaitFor(t, 10*time.Second, "the paused standby 300ms behind", func() bool { return lag() > 300*time.Millisecond })
	var readings atomic.Int32
	reads.p.betweenLagReadings = func() {
		readings.Add(1)
		if err := pair.PauseReplay(context.Background(), pair.Standby, false); err != nil {
			t.Error(err)
		}
		pgtest.WaitFor(t, 10*time.Second, "the standby caught up", func() bool { return lag() == 0 })
	}
	// The dial waits on the pair's script between the readings: its
	// caller gets more than serverPort's 2s.
	var port int
	if err := reads.QueryRow(ctx, "SELECT inet_server_port()").Scan(&port); err != nil {
		t.Fatal(err)
	}
	if got := strconv.Itoa(port); got != pair.Standby.Port {
		t.Fatalf("a read ran on port %s, want the standby's %s, caught up by the second reading", got, pair.Standby.Port)
	}
	if n := readings.Load(); n != 1 {
		t.Fatalf("%d first readings past the bound, want 1", n)
	}
}

// The standby promoted and the old primary rejoined as its standby: the
// pool writes to the new primary, the read pool reads from the old one,
// and a write through the read pool is refused there; a pool that asks for
// target_session_attrs=standby moves to the rejoined host too.
func TestReadsAfterOldPrimaryRejoins(t *testing.T) {
	pair := pgpair.ForTest(t)
	pool, reads := readsPool(t, pair, 100*time.Millisecond)
	standbys, err := New(context.Background(), haString(t, pair, "standby", "pool_role_check_period=100ms"))
	if err != nil {
		t.Fatal(err)
	}
	defer standbys.Close()
	ctx := context.Background()
	if got := serverPort(t, standbys); got != pair.Standby.Port {
		t.Fatalf("target_session_attrs=standby ran on port %s, want %s", got, pair.Standby.Port)
	}
	if err := pair.Stop(ctx, pair.Primary, pgpair.Fast); err != nil {
		t.Fatal(err)
	}
	if err := pair.Promote(ctx, pair.Standby); err != nil {
		t.Fatal(err)
	}
	if err := pair.Rejoin(ctx, pair.Primary); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "writes on the new primary", func() bool {
		var port int
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		err := pool.QueryRow(wctx, "INSERT INTO shoalpgx_reads VALUES (4) RETURNING inet_server_port()").Scan(&port)
		return err == nil && strconv.Itoa(port) == pair.Standby.Port
	})
	eventually(t, 10*time.Second, "reads on the rejoined old primary", func() bool {
		port, err := tryPort(reads)
		return err == nil && port == pair.Primary.Port
	})
	err = reads.QueryRow(ctx, "INSERT INTO shoalpgx_reads VALUES (5) RETURNING n").Scan(new(int))
	if !isReadOnlyRefusal(err) {
		t.Fatalf("a write through the read pool: %v, want SQLSTATE 25006", err)
	}
	eventually(t, 10*time.Second, "target_session_attrs=standby on the rejoined old primary", func() bool {
		port, err := tryPort(standbys)
		return err == nil && port == pair.Primary.Port
	})
}

// A read connection whose holder turned default_transaction_read_only off
// is closed when released: the next holder's write is refused again.
func TestReadsSessionTurnedWritableIsClosed(t *testing.T) {
	pair := pgpair.ForTest(t)
	_, reads := readsPool(t, pair, time.Second)
	ctx := context.Background()
	c, err := reads.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	pid := c.Conn().PgConn().PID()
	if _, err := c.Exec(ctx, "SET default_transaction_read_only = off"); err != nil {
		t.Fatal(err)
	}
	c.Release()
	c, err = reads.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Release()
	if c.Conn().PgConn().PID() == pid {
		t.Fatal("the connection made writable was handed out again")
	}
	var ro string
	if err := c.QueryRow(ctx, "SHOW default_transaction_read_only").Scan(&ro); err != nil || ro != "on" {
		t.Fatalf("the next read connection: default_transaction_read_only %q, %v", ro, err)
	}
}

// The standby promoted under the read pool: its connections there become
// fallback ones (the host is the primary now), so the pool looks for a
// standby every period, and none being left, keeps reading from the new
// primary without an error.
func TestReadsStandbyPromotedUnderThem(t *testing.T) {
	pair := pgpair.ForTest(t)
	_, reads := readsPool(t, pair, 100*time.Millisecond)
	ctx := context.Background()
	if got := serverPort(t, reads); got != pair.Standby.Port {
		t.Fatalf("a read ran on port %s, want the standby's %s", got, pair.Standby.Port)
	}
	if err := pair.Stop(ctx, pair.Primary, pgpair.Fast); err != nil {
		t.Fatal(err)
	}
	if err := pair.Promote(ctx, pair.Standby); err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "the read pool counts its connection on the promoted standby as a fallback", func() bool {
		port, err := tryPort(reads)
		return err == nil && port == pair.Standby.Port && reads.p.fallbackOpen.Load() > 0
	})
	if s := hostStat(t, reads.Hosts(), pair.Standby.Addr); s.Role != RolePrimary {
		t.Errorf("the promoted standby's role reads %q, want %q", s.Role, RolePrimary)
	}
}
