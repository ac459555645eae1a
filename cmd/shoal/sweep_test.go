package main

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"strings"
	"testing"

	"github.com/shoalpool/shoal/internal/benchrun"
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
	// A real short run: 8 connections at most, 16 workers by default,
	// three rounds.
	r := runShoal(t, append([]string{"sweep", "--target", dsn, "--max-conns", "8", "--rounds", "3"}, testTimes...)...)
	r.wantCode(t, exitOK)
	for _, want := range []string{"rounds: 3", "16 workers", "Comparison, each against the fastest:", "Rounds: ops/s per round", "vs default", "(default)"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("sweep output lacks %q:\n%s", want, r.stdout)
		}
	}
	if !strings.Contains(r.stdout, "keep the default.") && !strings.Contains(r.stdout, "Recommendation:") {
		t.Errorf("sweep output has no verdict:\n%s", r.stdout)
	}

	r = runShoal(t, append([]string{"sweep", "--target", dsn, "--max-conns", "4", "--rounds", "2", "--json"}, testTimes...)...)
	r.wantCode(t, exitOK)
	var rep benchrun.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("sweep --json: %v\n%s", err, r.stdout)
	}
	rec := rep.Recommendation
	if rec == nil || rec.Pool == nil || rec.IPS <= 0 || rec.Default == "" || rec.Rounds != 2 || rec.RatioLow > rec.Ratio || rec.Ratio > rec.RatioHigh {
		t.Fatalf("sweep --json: recommendation %+v", rec)
	}
	if !rec.KeepDefault && (!strings.Contains(rec.ConnString, "pool_max_conns=") || !strings.Contains(rec.ConnString, "REDACTED") || rec.RatioLow <= 1) {
		t.Errorf("recommended %s over the default with ratio %.2f [%.2f, %.2f], connection string %s", rec.Name, rec.Ratio, rec.RatioLow, rec.RatioHigh, rec.ConnString)
	}
	results := rep.Scenarios[0].Groups[0].Results
	// 1, 2 and 4 in all: 1x1, 1x2, 2x1, 1x4, 2x2, 4x1; the default is one
	// of them or a seventh.
	if n := len(results); n < 6 || n > 7 {
		t.Errorf("sweep of 4 connections ran %d configurations, want 6 or 7", n)
	}
	for _, res := range results {
		if len(res.RoundIPS) != 2 || res.Pool.MaxConns > 4 {
			t.Errorf("%s: %d rounds, %d connections", res.Name, len(res.RoundIPS), res.Pool.MaxConns)
		}
	}

	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if pw, _ := u.User.Password(); pw != "" && strings.Contains(r.stdout+r.stderr, pw) {
		t.Errorf("the password appears in the output")
	}
}

// TestSweepSaysWhenTheDefaultIsCapped: shoalpgx opens 4 connections or more
// without settings, so a sweep of --max-conns 2 cannot measure the
// default itself; its output must not call the 2-connection stand-in
// "what shoalpgx opens", and must say how to measure the real one.
func TestSweepSaysWhenTheDefaultIsCapped(t *testing.T) {
	dsn := postgresDSN(t)
	defConns, defParts, err := pgDefaultPool(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if defConns <= 2 {
		t.Fatalf("shoalpgx's default pool has %d connections; the test needs more than 2", defConns)
	}
	r := runShoal(t, append([]string{"sweep", "--target", dsn, "--max-conns", "2", "--rounds", "2"}, testTimes...)...)
	r.wantCode(t, exitOK)
	want := fmt.Sprintf("what shoalpgx opens on this connection string and machine without settings, %s in %s, capped at --max-conns 2",
		benchrun.Plural(defConns, "connection"), benchrun.Plural(defParts, "partition"))
	if !strings.Contains(r.stdout, want) {
		t.Errorf("the scenario line does not say the default is capped; want %q in:\n%s", want, r.stdout)
	}
	if want := fmt.Sprintf("--max-conns %d or more measures the default itself", defConns); !strings.Contains(r.stdout, want) {
		t.Errorf("the verdict does not say how to measure the default itself; want %q in:\n%s", want, r.stdout)
	}
}
