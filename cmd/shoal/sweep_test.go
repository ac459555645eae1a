package main

import (
	"encoding/json"
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
	r := runShoal(t, append([]string{"sweep", "--target", dsn, "--workers", "8", "--max-conns", "8"}, testTimes...)...)
	r.wantCode(t, exitOK)
	for _, want := range []string{"Comparison:", "Recommendation:", "pool_max_conns=", "pool_partitions=", "MaxConns:", "Partitions:"} {
		if !strings.Contains(r.stdout, want) {
			t.Errorf("sweep output lacks %q:\n%s", want, r.stdout)
		}
	}

	r = runShoal(t, append([]string{"sweep", "--target", dsn, "--workers", "4", "--max-conns", "4", "--json"}, testTimes...)...)
	r.wantCode(t, exitOK)
	var rep benchrun.Report
	if err := json.Unmarshal([]byte(r.stdout), &rep); err != nil {
		t.Fatalf("sweep --json: %v\n%s", err, r.stdout)
	}
	rec := rep.Recommendation
	if rec == nil || rec.Pool == nil || rec.IPS <= 0 || rec.BestIPS < rec.IPS*(1-sweepTolerance)-1e-9 {
		t.Fatalf("sweep --json: recommendation %+v", rec)
	}
	if !strings.Contains(rec.ConnString, "pool_max_conns=4") || !strings.Contains(rec.ConnString, "REDACTED") {
		t.Errorf("connection string to paste: %s", rec.ConnString)
	}
	if n := len(rep.Scenarios[0].Groups[0].Results); n != 3 { // 1x4, 2x2, 4x1
		t.Errorf("sweep of 4 connections ran %d configurations, want 3", n)
	}

	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	if pw, _ := u.User.Password(); pw != "" && strings.Contains(r.stdout+r.stderr, pw) {
		t.Errorf("the password appears in the output")
	}
}

func TestRecommendPicksSmallestWithinTolerance(t *testing.T) {
	res := func(name string, conns, parts int, ips float64) benchrun.Result {
		return benchrun.Result{Name: name, Status: benchrun.StatusOK, IPS: ips,
			Pool: &benchrun.PoolConfig{MaxConns: conns, Partitions: parts, ConnsPerPartition: conns / parts}}
	}
	rep := &benchrun.Report{Scenarios: []benchrun.ScenarioResult{{Groups: []benchrun.GroupResult{{Results: []benchrun.Result{
		res("1x32", 32, 1, 1500),
		res("4x8", 32, 4, 2140),
		res("8x4", 32, 8, 2200),
		res("16x2", 32, 16, 2190),
		{Name: "32x1", Status: benchrun.StatusFailed},
	}}}}}}
	rec, ok := recommend(rep)
	if !ok || rec.pick.Name != "4x8" || rec.best.Name != "8x4" {
		t.Fatalf("picked %s (best %s), want 4x8 within 3%% of 8x4", rec.pick.Name, rec.best.Name)
	}
}
