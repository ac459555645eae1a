package etcdtest

import (
	"os"
	"os/exec"
	"testing"
)

// Environment variables the package reads.
const (
	// EnvBinary names the etcd binary to run; without it, "etcd" on PATH.
	EnvBinary = "SHOAL_ETCD_BIN"
	// envRequire turns a missing binary from a skip into a failure.
	envRequire = "SHOAL_REQUIRE_SERVICES"
)

// binary returns the etcd binary to run: explicit when set, else
// $SHOAL_ETCD_BIN, else etcd on PATH. Without one the test skips, or fails
// under SHOAL_REQUIRE_SERVICES=1, where a missing server is a failure.
func binary(t testing.TB, explicit string) string {
	t.Helper()
	name := explicit
	if name == "" {
		name = os.Getenv(EnvBinary)
	}
	if name == "" {
		name = "etcd"
	}
	path, err := exec.LookPath(name)
	if err == nil {
		return path
	}
	if os.Getenv(envRequire) == "1" {
		t.Fatalf("etcdtest: no etcd binary (%v) and %s=1; install etcd-server (scripts/services.sh) or set %s", err, envRequire, EnvBinary)
	}
	t.Skipf("etcdtest: no etcd binary (%v); install etcd-server or set %s", err, EnvBinary)
	return ""
}
