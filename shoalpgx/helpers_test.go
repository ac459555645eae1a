package shoalpgx

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"go.uber.org/goleak"
)

// The server: tests read its connection string from SHOAL_TEST_POSTGRES
// (scripts/test-env.sh exports it). When it is unset or the server does not
// answer, tests skip, unless SHOAL_REQUIRE_SERVICES=1 (CI), which makes that
// a failure.
const (
	envPostgres        = "SHOAL_TEST_POSTGRES"
	envRequireServices = "SHOAL_REQUIRE_SERVICES"
)

var (
	serverOnce sync.Once
	serverErr  error
)

// requirePostgres returns the test server's connection string, or skips
// (fails, under SHOAL_REQUIRE_SERVICES=1) when there is none that answers.
func requirePostgres(t testing.TB) string {
	t.Helper()
	connString := os.Getenv(envPostgres)
	required := os.Getenv(envRequireServices) == "1"
	if connString == "" {
		if required {
			t.Fatalf("%s is not set and %s=1: PostgreSQL is required (run scripts/services.sh and . scripts/test-env.sh)", envPostgres, envRequireServices)
		}
		t.Skipf("%s is not set", envPostgres)
	}
	serverOnce.Do(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		conn, err := pgx.Connect(ctx, connString)
		if err != nil {
			serverErr = err
			return
		}
		serverErr = conn.Close(ctx)
	})
	if serverErr != nil {
		if required {
			t.Fatalf("PostgreSQL at %s is unreachable and %s=1: %v", envPostgres, envRequireServices, serverErr)
		}
		t.Skipf("PostgreSQL at %s is unreachable: %v", envPostgres, serverErr)
	}
	return connString
}

// appName gives a test's connections an application_name of their own, so
// that the test can find its backends in pg_stat_activity.
func appName(t testing.TB) string {
	name := "shoalpgx-" + strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	if len(name) > 60 {
		name = name[:60]
	}
	return name
}

// testConfig parses the server's connection string with the test's
// application_name, and lets mutate change it.
func testConfig(t testing.TB, mutate func(*Config)) *Config {
	t.Helper()
	cfg, err := ParseConfig(requirePostgres(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.ConnConfig.RuntimeParams["application_name"] = appName(t)
	if mutate != nil {
		mutate(cfg)
	}
	return cfg
}

// newTestPool opens a pool on the test server. At cleanup it closes the
// pool and checks that no goroutine started during the test is left.
func newTestPool(t testing.TB, mutate func(*Config)) *Pool {
	t.Helper()
	return newPoolFor(t, testConfig(t, mutate))
}

// newPoolFor opens a pool for cfg and closes it at cleanup, checking for
// leaked goroutines.
func newPoolFor(t testing.TB, cfg *Config) *Pool {
	t.Helper()
	ignore := goleak.IgnoreCurrent()
	p, err := NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		p.Close()
		goleak.VerifyNone(t, ignore)
	})
	return p
}

// testCtx is a context that bounds one step of a test, so that a hang shows
// as a failure instead of a stuck test run.
func testCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	t.Cleanup(cancel)
	return ctx
}

// adminConn is a plain pgx connection outside any pool, for looking at and
// killing a pool's backends.
func adminConn(t testing.TB) *pgx.Conn {
	t.Helper()
	ctx := testCtx(t)
	cfg, err := pgx.ParseConfig(requirePostgres(t))
	if err != nil {
		t.Fatal(err)
	}
	cfg.RuntimeParams["application_name"] = "shoalpgx-admin"
	conn, err := pgx.ConnectConfig(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// backendPID returns the server process id behind c.
func backendPID(t testing.TB, c *Conn) uint32 {
	t.Helper()
	return c.Conn().PgConn().PID()
}
