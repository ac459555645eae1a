//go:build unix

package clustertest

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Environment variables the tests read (scripts/test-env.sh exports them).
const (
	envPostgres = "SHOAL_TEST_POSTGRES"
	envEtcd     = "SHOAL_TEST_ETCD"
	envRequire  = "SHOAL_REQUIRE_SERVICES"
)

// binDir holds the worker binary, built once for the whole run; TestMain
// removes it.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "shoal-clustertest-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(2)
	}
	binDir = dir
	code := m.Run()
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// missing skips the test, or fails it under SHOAL_REQUIRE_SERVICES=1.
func missing(t *testing.T, format string, args ...any) {
	t.Helper()
	if os.Getenv(envRequire) == "1" {
		t.Fatalf(format, args...)
	}
	t.Skipf(format, args...)
}

// postgres returns the server of the tests, checked to answer.
func postgres(t *testing.T) string {
	t.Helper()
	cs := os.Getenv(envPostgres)
	if cs == "" {
		missing(t, "%s is not set; run scripts/services.sh and . scripts/test-env.sh", envPostgres)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, cs)
	if err != nil {
		missing(t, "PostgreSQL at %s does not answer: %v", envPostgres, err)
	}
	_ = c.Close(ctx)
	return cs
}

// sharedEtcd returns the shared etcd's endpoint, checked to answer. Tests
// that hurt etcd start their own (internal/etcdtest) instead.
func sharedEtcd(t *testing.T) string {
	t.Helper()
	addr := os.Getenv(envEtcd)
	if addr == "" {
		missing(t, "%s is not set; run scripts/services.sh and . scripts/test-env.sh", envEtcd)
	}
	c, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		missing(t, "etcd at %s=%s does not answer: %v", envEtcd, addr, err)
	}
	_ = c.Close()
	return addr
}

var build struct {
	once sync.Once
	path string
	err  error
}

// workerBinary builds ./worker once per run and returns its path.
func workerBinary(t *testing.T) string {
	t.Helper()
	build.once.Do(func() {
		gobin, err := exec.LookPath("go")
		if err != nil {
			build.err = fmt.Errorf("no go command to build the worker: %w", err)
			return
		}
		out := filepath.Join(binDir, "worker")
		cmd := exec.Command(gobin, "build", "-o", out, "./worker")
		if b, err := cmd.CombinedOutput(); err != nil {
			build.err = fmt.Errorf("go build ./worker: %v\n%s", err, b)
			return
		}
		build.path = out
	})
	if build.err != nil {
		t.Fatal(build.err)
	}
	return build.path
}

// uniqueName returns a name no other test or run uses, for budgets and
// application_names (which PostgreSQL cuts at 63 bytes).
func uniqueName(t *testing.T) string {
	n := strings.ToLower(strings.NewReplacer("/", "-", "_", "-").Replace(t.Name()))
	n = strings.TrimPrefix(n, "test")
	if len(n) > 30 {
		n = n[:30]
	}
	return fmt.Sprintf("ct-%s-%d-%d", n, os.Getpid(), time.Now().UnixNano()%1e9)
}
