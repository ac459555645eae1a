package shoalpgx

import (
	"testing"

	"github.com/shoalpool/shoal/internal/pgtest"
)

// The test server, bounded waits and the checks the tests share are in
// internal/pgtest; these name its pool helpers for this package's types.

// testConfig parses the server's connection string with the test's
// application_name, and lets mutate change it.
func testConfig(t testing.TB, mutate func(*Config)) *Config {
	t.Helper()
	return pgtest.Config(t, ParseConfig, mutate)
}

// newTestPool opens a pool on the test server. At cleanup it closes the
// pool and checks that no goroutine started during the test is left.
func newTestPool(t testing.TB, mutate func(*Config)) *Pool {
	t.Helper()
	return pgtest.NewPool(t, ParseConfig, NewWithConfig, mutate)
}

// newPoolFor opens a pool for cfg and closes it at cleanup, checking for
// leaked goroutines.
func newPoolFor(t testing.TB, cfg *Config) *Pool {
	t.Helper()
	return pgtest.Open(t, NewWithConfig, cfg)
}

// backendPID returns the server process id behind c.
func backendPID(t testing.TB, c *Conn) uint32 {
	t.Helper()
	return c.Conn().PgConn().PID()
}
