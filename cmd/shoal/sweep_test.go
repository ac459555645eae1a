package main

import (
	"os"
	"strings"
	"testing"
)

// TestSweepPostgres runs the sweep against the test environment's
// PostgreSQL (SHOAL_TEST_POSTGRES, from scripts/test-env.sh).
func TestSweepPostgres(t *testing.T) {
	if newShoalPGX == nil {
		// shoalpgx has not landed: sweep must say so plainly.
		r := runShoal(t, "sweep", "--target", "postgres://u:pw@127.0.0.1:5432/db")
		r.wantCode(t, exitFailed)
		if !strings.Contains(r.stderr, "not available yet") || !strings.Contains(r.stderr, "shoalpgx") {
			t.Errorf("sweep without shoalpgx: %s", r.stderr)
		}
		return
	}
	dsn := os.Getenv("SHOAL_TEST_POSTGRES")
	if dsn == "" {
		if requireServices() {
			t.Fatal("SHOAL_TEST_POSTGRES is not set and SHOAL_REQUIRE_SERVICES=1")
		}
		t.Skip("SHOAL_TEST_POSTGRES not set (. scripts/test-env.sh)")
	}
	r := runShoal(t, append([]string{"sweep", "--target", dsn, "--workers", "8", "--max-conns", "8"}, testTimes...)...)
	r.wantCode(t, exitOK)
	for _, want := range []string{"Comparison:", "Recommendation:", "pool_max_conns=", "pool_partitions=", "MaxConns:", "Partitions:"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("sweep output lacks %q:\n%s", want, r.stdout)
		}
	}
	tg, err := parseTarget(dsn)
	if err != nil {
		t.Fatal(err)
	}
	for _, sec := range tg.secrets {
		if sec != "" && strings.Contains(r.stdout+r.stderr, sec) {
			t.Errorf("the password appears in the output")
		}
	}
}
