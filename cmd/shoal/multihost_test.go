package main

import (
	"os"
	"strings"
	"testing"
)

// TestMultiHostPostgresTarget guards a connection string naming several
// hosts, which shoalpgx dials host by host: bench reaches it, and its first
// host being down does not stop the run while another answers.
func TestMultiHostPostgresTarget(t *testing.T) {
	ha, single := os.Getenv("SHOAL_TEST_PG_HA"), os.Getenv("SHOAL_TEST_POSTGRES")
	if ha == "" || single == "" {
		skipOrFail(t, "SHOAL_TEST_PG_HA or SHOAL_TEST_POSTGRES not set (. scripts/test-env.sh)")
	}
	// The single server behind a closed port: postgres://u:p@closed,live/db.
	downFirst := strings.Replace(single, "@", "@"+closedPort(t)+",", 1)
	for _, target := range []string{ha, downFirst} {
		rep, _ := benchTarget(t, target, "--only", "churn", "--workers", "2")
		if got := strings.Join(measuredNames(t, rep), " "); !strings.Contains(got, "churn/shoalpgx_pool") {
			t.Errorf("%s: shoalpgx_pool not measured; measured: %s", rep.Target, got)
		}
	}
}
