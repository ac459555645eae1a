package main

import (
	"strings"
	"testing"
)

// TestSweepAllowWritesRunsAWritingQuery: --allow-writes is what a writing
// --query needs, and all it needs: the preflight's read-only refusal must
// not stop such a sweep. CREATE TEMP TABLE IF NOT EXISTS writes (the
// server refuses it read-only) and leaves nothing behind its session.
func TestSweepAllowWritesRunsAWritingQuery(t *testing.T) {
	const query = "CREATE TEMP TABLE IF NOT EXISTS shoal_sweep_writes (i int)"
	r := runShoal(t, append([]string{"sweep", "--target", postgresDSN(t), "--query", query, "--allow-writes",
		"--workers", "1", "--max-conns", "2", "--rounds", "2"}, testTimes...)...)
	r.wantCode(t, exitOK)
	if strings.Contains(r.stdout, "FAILED") || !strings.Contains(r.stdout, "(default)") {
		t.Errorf("a writing query with --allow-writes did not sweep:\nstdout: %s\nstderr: %s", r.stdout, r.stderr)
	}
}
