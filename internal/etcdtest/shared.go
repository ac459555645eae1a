package etcdtest

import (
	"net"
	"os"
	"testing"
	"time"
)

// EnvShared names the address of the etcd server the tests share, which
// scripts/services.sh starts and scripts/test-env.sh exports. Tests that
// need no fault of etcd's use it rather than starting one of their own.
const EnvShared = "SHOAL_TEST_ETCD"

// SharedAddr returns the address of the shared etcd server, from
// SHOAL_TEST_ETCD, once it has accepted a TCP connection. Unset or not
// answering, the test skips, unless SHOAL_REQUIRE_SERVICES=1 (CI), when it
// fails.
func SharedAddr(t testing.TB) string {
	t.Helper()
	missing := t.Skipf
	if os.Getenv(envRequire) == "1" {
		missing = t.Fatalf
	}
	addr := os.Getenv(EnvShared)
	if addr == "" {
		missing("%s is not set; run scripts/services.sh and . scripts/test-env.sh", EnvShared)
		return ""
	}
	c, err := net.DialTimeout("tcp", addr, 3*time.Second)
	if err != nil {
		missing("etcd at %s=%s does not answer: %v", EnvShared, addr, err)
		return ""
	}
	_ = c.Close()
	return addr
}
