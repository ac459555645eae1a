package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// TestSweepQueryMasksOnlyThePassword: a --query with a password keyword
// in a quoted identifier is shown, in the text report and in --json, with
// the password masked and the quote and comma after it as written.
func TestSweepQueryMasksOnlyThePassword(t *testing.T) {
	const query = `SELECT 1 AS "password=abc"`
	want := `SELECT 1 AS "password=` + redactedWord + `", 2 rounds`
	args := append([]string{"sweep", "--target", postgresDSN(t), "--query", query,
		"--workers", "1", "--max-conns", "2", "--rounds", "2"}, testTimes...)

	r := runShoal(t, args...)
	r.wantCode(t, exitOK)
	if !strings.Contains(r.stdout, want) || strings.Contains(r.stdout+r.stderr, "abc") {
		t.Errorf("sweep's report lacks %s:\n%s\n%s", want, r.stdout, r.stderr)
	}

	r = runShoal(t, append(args, "--json")...)
	r.wantCode(t, exitOK)
	var rep benchrun.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("sweep --json: %v\n%s", err, r.stdout)
	}
	if got := rep.Scenarios[0].Groups[0].Title; !strings.HasSuffix(got, want) {
		t.Errorf("sweep --json: title %q, want it to end in %q", got, want)
	}
}
