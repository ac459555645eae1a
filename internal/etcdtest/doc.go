// Package etcdtest starts throwaway etcd servers for tests that need to
// hurt one: pause a member (SIGSTOP), resume it (SIGCONT), kill it
// (SIGKILL) or restart it on its old data. Each server is a real etcd
// process from the binary on PATH (or SHOAL_ETCD_BIN), listening on free
// loopback ports, with its data in the test's t.TempDir(); every process
// started is killed and reaped in t.Cleanup, whether the test passes, fails
// or is skipped.
//
// Without the binary a test skips, unless SHOAL_REQUIRE_SERVICES=1 (as in
// CI), when it fails.
//
// Tests that need no fault of etcd's share one server instead, the one
// scripts/services.sh starts: SharedAddr returns its address.
package etcdtest
