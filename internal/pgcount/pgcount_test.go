package pgcount

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// postgres returns the test server's connection string from
// SHOAL_TEST_POSTGRES, skipping when it is unset, failing instead under
// SHOAL_REQUIRE_SERVICES=1.
func postgres(t *testing.T) string {
	t.Helper()
	dsn := os.Getenv("SHOAL_TEST_POSTGRES")
	if dsn == "" {
		if os.Getenv("SHOAL_REQUIRE_SERVICES") == "1" {
			t.Fatal("SHOAL_TEST_POSTGRES is not set and SHOAL_REQUIRE_SERVICES=1")
		}
		t.Skip("SHOAL_TEST_POSTGRES is not set; run scripts/services.sh and . scripts/test-env.sh")
	}
	return dsn
}

// uniqueApp is an application_name no other test or run uses.
func uniqueApp(t *testing.T) string {
	return fmt.Sprintf("pgcount-%s-%d", strings.ToLower(t.Name()), time.Now().UnixNano())
}

// connect opens n connections under app, closed with the test.
func connect(t *testing.T, dsn, app string, n int) []*pgx.Conn {
	t.Helper()
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["application_name"] = app
	conns := make([]*pgx.Conn, n)
	for i := range conns {
		c, err := pgx.ConnectConfig(context.Background(), cfg)
		if err != nil {
			t.Fatal(err)
		}
		conns[i] = c
		t.Cleanup(func() { _ = c.Close(context.Background()) })
	}
	return conns
}

// waitFor polls until cond holds, for 10s at most.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	for deadline := time.Now().Add(10 * time.Second); !cond(); {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

// The checker follows the count up and down, keeps the maximum, lists the
// samples above the limit, and never counts its own connection.
func TestChecker(t *testing.T) {
	dsn := postgres(t)
	app := uniqueApp(t)
	c, err := Start(context.Background(), Config{ConnString: dsn, Arg: app, Limit: 3})
	if err != nil {
		t.Fatal(err)
	}
	stopped := false
	defer func() {
		if !stopped {
			c.Stop()
		}
	}()
	if got := c.Last().Count; got != 0 {
		t.Fatalf("first sample counts %d connections of a fresh application_name, want 0 (is the checker counting itself?)", got)
	}

	conns := connect(t, dsn, app, 5)
	waitFor(t, "a sample of 5", func() bool { return c.Last().Count == 5 })
	for _, cn := range conns[:2] {
		if err := cn.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	waitFor(t, "a sample of 3", func() bool { return c.Last().Count == 3 })

	r := c.Stop()
	stopped = true
	if r.Max != 5 {
		t.Errorf("Max = %d, want 5", r.Max)
	}
	if r.Errors != 0 {
		t.Errorf("%d failed samples, the last: %v", r.Errors, r.LastErr)
	}
	if len(r.Over) == 0 {
		t.Error("no sample listed over the limit of 3, though 5 were open")
	}
	for _, s := range r.Over {
		if s.Count <= 3 {
			t.Errorf("sample %d listed over the limit of 3", s.Count)
		}
	}
	for i := 1; i < len(r.Samples); i++ {
		if !r.Samples[i].At.After(r.Samples[i-1].At) {
			t.Fatalf("samples %d and %d are out of order", i-1, i)
		}
	}
	if last := r.Samples[len(r.Samples)-1].Count; last != 3 {
		t.Errorf("last sample %d, want 3", last)
	}
}

// Samples come every Interval: never more often, however idle the machine.
func TestCheckerInterval(t *testing.T) {
	dsn := postgres(t)
	c, err := Start(context.Background(), Config{ConnString: dsn, Arg: uniqueApp(t)})
	if err != nil {
		t.Fatal(err)
	}
	const window = 500 * time.Millisecond
	time.Sleep(window)
	r := c.Stop()
	if most := int(window/DefaultInterval) + 2; len(r.Samples) > most {
		t.Errorf("%d samples in %v, more than one per %v allows (%d)", len(r.Samples), window, DefaultInterval, most)
	}
	if len(r.Samples) < 3 {
		t.Errorf("only %d samples in %v at one per %v", len(r.Samples), window, DefaultInterval)
	}
}

// A query the server rejects fails Start, rather than a run of errors.
func TestCheckerBadQuery(t *testing.T) {
	dsn := postgres(t)
	_, err := Start(context.Background(), Config{ConnString: dsn, Query: "SELECT count(*) FROM no_such_view WHERE x = $1", Arg: "a"})
	if err == nil {
		t.Fatal("Start succeeded with a query on a missing view")
	}
	if _, err := Start(context.Background(), Config{ConnString: dsn, Arg: OwnApplicationName}); err == nil {
		t.Fatal("Start agreed to count its own application_name")
	}
}

// CountSocketUser counts PgBouncer's server connections, which reach
// PostgreSQL over the Unix socket (scripts/services.sh), and not the
// clients that come over TCP, the checker's own among them.
func TestCountSocketUser(t *testing.T) {
	dsn := postgres(t)
	bouncer := os.Getenv("SHOAL_TEST_PGBOUNCER")
	if bouncer == "" {
		if os.Getenv("SHOAL_REQUIRE_SERVICES") == "1" {
			t.Fatal("SHOAL_TEST_PGBOUNCER is not set and SHOAL_REQUIRE_SERVICES=1")
		}
		t.Skip("SHOAL_TEST_PGBOUNCER is not set")
	}
	cfg, err := pgx.ParseConfig(dsn)
	if err != nil {
		t.Fatal(err)
	}
	app := uniqueApp(t)
	connect(t, dsn, app, 2) // direct, over TCP: not counted
	// PgBouncer (transaction pooling) sets each client's application_name
	// on the server connection it lends; an open transaction keeps the
	// connection lent, so the count is exact.
	for _, c := range connect(t, bouncer, app, 2) {
		if _, err := c.Exec(context.Background(), "BEGIN"); err != nil {
			t.Fatal(err)
		}
		if _, err := c.Exec(context.Background(), "SELECT 1"); err != nil {
			t.Fatal(err)
		}
	}
	c, err := Start(context.Background(), Config{ConnString: dsn,
		Query: CountSocketUser + " AND application_name = '" + app + "'", Arg: cfg.User})
	if err != nil {
		t.Fatal(err)
	}
	if r := c.Stop(); r.Max != 2 {
		t.Fatalf("counted %d socket backends of %s, want 2 (PgBouncer's; the 2 direct ones come over TCP)", r.Max, app)
	}
}
