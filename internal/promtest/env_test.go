package promtest

import (
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
)

// need returns the value of the environment variable name, or skips the
// test when it is unset; with SHOAL_REQUIRE_SERVICES=1 (CI) it fails it
// instead.
func need(t *testing.T, name, what string) string {
	t.Helper()
	v := os.Getenv(name)
	if v != "" {
		return v
	}
	if os.Getenv("SHOAL_REQUIRE_SERVICES") == "1" {
		t.Fatalf("%s is unset: it names %s (. scripts/test-env.sh sets it)", name, what)
	}
	t.Skipf("%s is unset: it names %s", name, what)
	return ""
}

// prometheusBin returns the Prometheus binary SHOAL_TEST_PROMETHEUS names.
func prometheusBin(t *testing.T) string {
	t.Helper()
	bin := need(t, "SHOAL_TEST_PROMETHEUS", "the prometheus binary (Debian's prometheus package)")
	if _, err := os.Stat(bin); err != nil {
		t.Fatalf("SHOAL_TEST_PROMETHEUS: %v", err)
	}
	return bin
}

// promtoolBin returns the promtool beside the Prometheus binary, or the
// one on PATH.
func promtoolBin(t *testing.T) string {
	t.Helper()
	beside := filepath.Join(filepath.Dir(prometheusBin(t)), "promtool")
	if _, err := os.Stat(beside); err == nil {
		return beside
	}
	p, err := exec.LookPath("promtool")
	if err != nil {
		t.Fatalf("no promtool beside %s or on PATH: %v", prometheusBin(t), err)
	}
	return p
}

// freePort returns a loopback port nobody listened on a moment ago.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

func loopback(port int) string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(port)) }

// repoFile is a path in the repository, from this module's directory.
func repoFile(parts ...string) string {
	return filepath.Join(append([]string{"..", ".."}, parts...)...)
}
