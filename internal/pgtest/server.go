package pgtest

import (
	"context"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
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

// ConnString returns the test server's connection string, or skips (fails,
// under SHOAL_REQUIRE_SERVICES=1) when there is none that answers.
func ConnString(t testing.TB) string {
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

// AppName gives a test's connections an application_name of their own, so
// that the test can find its backends in pg_stat_activity.
func AppName(t testing.TB) string {
	name := "shoalpgx-" + strings.NewReplacer("/", "-", " ", "_").Replace(t.Name())
	if len(name) > 60 {
		name = name[:60]
	}
	return name
}

// AdminConn is a plain pgx connection outside any pool, for looking at and
// killing a pool's backends. It is closed at cleanup.
func AdminConn(t testing.TB) *pgx.Conn {
	t.Helper()
	ctx := Ctx(t)
	cfg, err := pgx.ParseConfig(ConnString(t))
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
