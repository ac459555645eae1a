package shoalpgx

import (
	"os"
	"strconv"
	"testing"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// The test server, bounded waits and the checks the tests share are in
// internal/pgtest; these name its pool helpers for this package's types.

// testConfig parses the server's connection string with the test's
// application_name, and lets mutate change it.
func testConfig(t testing.TB, mutate func(*Config)) *Config {
	t.Helper()
	return pgtest.Config(t, ParseConfig, withTestPipeline(mutate))
}

// newTestPool opens a pool on the test server. At cleanup it closes the
// pool and checks that no goroutine started during the test is left.
func newTestPool(t testing.TB, mutate func(*Config)) *Pool {
	t.Helper()
	return pgtest.NewPool(t, ParseConfig, NewWithConfig, withTestPipeline(mutate))
}

// testPipeline is SHOAL_TEST_PIPELINE: above 0, the tests' pools
// pipeline that deep wherever their settings allow, so that the suite
// runs its tests of what pipelining keeps (scripts/test.sh names them)
// with it on.
var testPipeline, _ = strconv.Atoi(os.Getenv("SHOAL_TEST_PIPELINE"))

// withTestPipeline is mutate, then Pipeline set to testPipeline where the
// test left it off and MaxConns and MinConns leave room for both kinds.
func withTestPipeline(mutate func(*Config)) func(*Config) {
	if testPipeline <= 0 {
		return mutate
	}
	return func(c *Config) {
		if mutate != nil {
			mutate(c)
		}
		if c.Pipeline == 0 && c.MaxConns >= 2 && c.MinConns < c.MaxConns-1 {
			c.Pipeline = testPipeline
		}
	}
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

// shoalStats is p's statistics as a function, for pgtest's helpers.
func shoalStats(p *Pool) func() shoal.Stats {
	return func() shoal.Stats { return p.Stat().Shoal() }
}

// SHOAL_TEST_PIPELINE reaches the tests' pools: they pipeline with it
// set, and without it they do not.
func TestTestPoolsFollowSHOALTESTPIPELINE(t *testing.T) {
	p := newTestPool(t, nil)
	if got := p.config.Pipeline; got != max(testPipeline, 0) || (p.pipe != nil) != (testPipeline > 0) {
		t.Fatalf("SHOAL_TEST_PIPELINE=%d: a test pool's Pipeline is %d (shared pool %v)", testPipeline, got, p.pipe != nil)
	}
}
