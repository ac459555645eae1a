package main

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// tenantDSN returns the URL of one of the test server's tenant roles,
// which the test role cannot see the backend_type of in pg_stat_activity,
// skipping without them.
func tenantDSN(t *testing.T, n int) string {
	t.Helper()
	template := os.Getenv("SHOAL_TEST_PG_TENANTS")
	if template == "" {
		skipOrFail(t, "SHOAL_TEST_PG_TENANTS is not set")
	}
	return fmt.Sprintf(template, n)
}

// holdConns opens n connections to dsn and keeps them open until the test
// ends.
func holdConns(t *testing.T, ctx context.Context, dsn string, n int) []*pgx.Conn {
	t.Helper()
	conns := make([]*pgx.Conn, n)
	for i := range conns {
		c, err := pgx.Connect(ctx, dsn)
		if err != nil {
			t.Fatalf("opening connection %d of %d: %v", i+1, n, err)
		}
		t.Cleanup(func() { c.Close(context.Background()) })
		conns[i] = c
	}
	return conns
}

// serverLimit is max_connections less the slots reserved from the test
// role, as conn's server has them.
func serverLimit(t *testing.T, ctx context.Context, conn *pgx.Conn) int {
	t.Helper()
	var limit int
	err := conn.QueryRow(ctx, `select current_setting('max_connections')::int - current_setting('superuser_reserved_connections')::int
		- coalesce(current_setting('reserved_connections', true)::int, 0)`).Scan(&limit)
	if err != nil {
		t.Fatal(err)
	}
	return limit
}

// preflightMaxConns runs the sweep's preflight of --max-conns maxConns
// against dsn and returns its status and what it wrote.
func preflightMaxConns(t *testing.T, ctx context.Context, dsn string, maxConns int) (int, string) {
	t.Helper()
	o, err := parseFlags("sweep", []string{"--target", dsn, "--max-conns", strconv.Itoa(maxConns)})
	if err != nil {
		t.Fatal(err)
	}
	tg, err := parseTarget(dsn)
	if err != nil {
		t.Fatal(err)
	}
	var errOut bytes.Buffer
	code := preflightSweep(ctx, o, tg, &errOut)
	return code, errOut.String()
}

// suggestedMaxConns is the --max-conns the preflight's advice suggests, or
// -1 when it suggests none.
func suggestedMaxConns(msg string) int {
	m := regexp.MustCompile(`use --max-conns (\d+) or fewer`).FindStringSubmatch(msg)
	if m == nil {
		return -1
	}
	n, _ := strconv.Atoi(m[1])
	return n
}

// TestSweepMaxConnsAboveTheRoomNow: a --max-conns within max_connections
// but above what is free now, other roles' connections counted, is refused
// naming the server's limit and the connections open, rather than left to
// fail part way through the sweep.
func TestSweepMaxConnsAboveTheRoomNow(t *testing.T) {
	dsn := postgresDSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	const held = 6
	admin := holdConns(t, ctx, dsn, 1)[0]
	holdConns(t, ctx, tenantDSN(t, 47), held)
	limit := serverLimit(t, ctx, admin)
	if limit > 1024 {
		t.Skipf("the server allows %d client connections, more than --max-conns takes", limit)
	}
	code, msg := preflightMaxConns(t, ctx, dsn, limit)
	if code != exitUsage {
		t.Fatalf("--max-conns %d, the server's whole limit, with %d connections held open: status %d, want %d\n%s", limit, held+1, code, exitUsage, msg)
	}
	for _, want := range []string{"max_connections", "open now", "or fewer"} {
		if !strings.Contains(msg, want) {
			t.Errorf("the refusal does not say %q:\n%s", want, msg)
		}
	}
	if n := suggestedMaxConns(msg); n < minSweepConns || n > limit-held-1 {
		t.Errorf("with %d connections held open, the advice suggests --max-conns %d, not %d to %d:\n%s", held+1, n, minSweepConns, limit-held-1, msg)
	}
}

// TestSweepRoomLeavesOutItsOwnConnection: the room the preflight
// suggests is max_connections less the reserved slots and the client
// backends open besides its own, which it closes before the sweep dials.
// Another role's connections are held open meanwhile, to be counted too.
// Other tests open and close connections meanwhile, so each try counts
// them before and after, and a try whose counts differ is tried again.
func TestSweepRoomLeavesOutItsOwnConnection(t *testing.T) {
	dsn := postgresDSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin := holdConns(t, ctx, dsn, 1)[0]
	holdConns(t, ctx, tenantDSN(t, 46), 3)
	limit := serverLimit(t, ctx, admin)
	open := func() int {
		var n int
		err := admin.QueryRow(ctx, `select count(*) from pg_stat_activity where usesysid is not null and datid is not null
			and coalesce(backend_type, 'client backend') = 'client backend'`).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	var tries []string
	for range 10 {
		before := open()
		code, msg := preflightMaxConns(t, ctx, dsn, 1024)
		after := open()
		if code != exitUsage {
			t.Fatalf("--max-conns 1024: status %d, want %d\n%s", code, exitUsage, msg)
		}
		n := suggestedMaxConns(msg)
		if before == after && n == limit-before {
			return
		}
		tries = append(tries, fmt.Sprintf("%d open before, %d after, --max-conns %d suggested", before, after, n))
	}
	t.Errorf("the server allows %d client connections; no try suggested that less those open besides the preflight's own:\n%s",
		limit, strings.Join(tries, "\n"))
}

// TestPreflightCountsTheRoleAndTheDatabase: the preflight reads the
// limits of the role it logs in as and of its database, and counts the
// connections open against each besides its own, as the server counts
// them against those limits; the role is the one it logs in as, which
// the server counts, not one the session has set. The counts are checked
// against the test's own, taken before and after, each try whose counts
// differ tried again.
func TestPreflightCountsTheRoleAndTheDatabase(t *testing.T) {
	dsn := postgresDSN(t)
	const tenant, held = 45, 3
	tenantConn := tenantDSN(t, tenant)
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	admin := holdConns(t, ctx, dsn, 1)[0]
	holdConns(t, ctx, tenantConn, held)
	role := fmt.Sprintf("shoal_tenant_%02d", tenant)
	counts := func() [2]int {
		var n [2]int
		err := admin.QueryRow(ctx, `select
			count(*) filter (where usename = $1 and coalesce(backend_type, 'client backend') in ('client backend', 'walsender')),
			count(*) filter (where datname = current_database() and coalesce(backend_type, 'client backend') in ('client backend', 'walsender')
				and usesysid is not null)
			from pg_stat_activity`, role).Scan(&n[0], &n[1])
		if err != nil {
			t.Fatal(err)
		}
		return n
	}
	srv, err := preflight(ctx, tenantConn+"&options=-c%20role%3Dshoal_tenants", "")
	if err != nil {
		t.Fatal(err)
	}
	if srv.Role != role {
		t.Errorf("logged in as %s with the role shoal_tenants set, the preflight read the limit of role %q", role, srv.Role)
	}
	var tries []string
	for range 10 {
		before := counts()
		srv, err := preflight(ctx, tenantConn, "")
		after := counts()
		if err != nil {
			t.Fatal(err)
		}
		if srv.Role != role || srv.Database != "shoal_test" || srv.RoleLimit != -1 || srv.DBLimit != -1 {
			t.Fatalf("the preflight read role %q, limit %d, database %q, limit %d; want %q, -1, shoal_test, -1",
				srv.Role, srv.RoleLimit, srv.Database, srv.DBLimit, role)
		}
		if before != after {
			continue
		}
		if srv.RoleInUse == before[0] && srv.DBInUse == before[1] && srv.RoleInUse >= held {
			return
		}
		tries = append(tries, fmt.Sprintf("role %d and database %d open, the preflight counted %d and %d", before[0], before[1], srv.RoleInUse, srv.DBInUse))
	}
	t.Errorf("with %d connections of %s held open, no try counted the role's and the database's connections besides the preflight's own:\n%s",
		held, role, strings.Join(tries, "\n"))
}

// TestPreflightReadsTheDatabaseLimit: the preflight reads the database's
// CONNECTION LIMIT as the server has it. The test role owns shoal_test and
// sets a limit above max_connections, which can refuse no one, and puts
// back the one it found.
func TestPreflightReadsTheDatabaseLimit(t *testing.T) {
	dsn := postgresDSN(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	admin := holdConns(t, ctx, dsn, 1)[0]
	var db string
	var was, maxConns int
	err := admin.QueryRow(ctx, `select datname, datconnlimit, current_setting('max_connections')::int
		from pg_database where datname = current_database()`).Scan(&db, &was, &maxConns)
	if err != nil {
		t.Fatal(err)
	}
	// Not ctx: the limit is put back after the test's context has ended.
	alter := func(limit int) error {
		actx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		_, err := admin.Exec(actx, fmt.Sprintf("alter database %s connection limit %d", pgx.Identifier{db}.Sanitize(), limit))
		return err
	}
	limit := maxConns + 1000
	if err := alter(limit); err != nil {
		t.Skipf("the test role may not set %s's CONNECTION LIMIT: %v", db, err)
	}
	t.Cleanup(func() {
		if err := alter(was); err != nil {
			t.Errorf("putting back %s's CONNECTION LIMIT %d: %v", db, was, err)
		}
	})
	srv, err := preflight(ctx, dsn, "")
	if err != nil {
		t.Fatal(err)
	}
	if srv.Database != db || srv.DBLimit != limit {
		t.Errorf("the preflight read database %q, CONNECTION LIMIT %d; want %q, %d", srv.Database, srv.DBLimit, db, limit)
	}
}
