package promtest

import (
	"context"
	"fmt"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgpair"
)

// lagFiring is the alert TestLiveHostLag brings about: on the pool
// "accounts/reads" (the read pool, whose connections are on the
// standby), for the paused standby's host.
var lagFiring = firing{"lag", "ShoalHostLagHigh", "accounts/reads"}

// TestLiveHostLag runs shoalload's "accounts" pool on the primary/standby
// pair (its writes on the primary, its reads on the standby through the
// read pool), scraped by a real Prometheus that evaluates the shipped
// rules (liveRules: ShoalHostLagHigh's bound lowered to lagBoundLive
// seconds). While the pair is healthy, the standby's lag is read again and
// again and no alert goes even pending; once the standby's replay is
// paused, with the commits going on, ShoalHostLagHigh fires for the
// standby, and for no other host.
func TestLiveHostLag(t *testing.T) {
	prom := prometheusBin(t)
	bin := buildProgram(t)
	pair := pgpair.ForTest(t) // its cleanup, which runs last, rebuilds a pair left paused
	began := time.Now()
	rulesPath := liveRules(t)

	// The replay resumes whatever happens to the test; a pair still paused
	// would be rebuilt, more slowly, by ForTest's cleanup.
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		defer cancel()
		if err := pair.PauseReplay(ctx, pair.Standby, false); err != nil {
			t.Errorf("resuming the standby's replay: %v", err)
		}
	})
	// The standby has replayed a commit of a moment ago: the lag a
	// reading shows right after the first write reaches it is measured
	// from there, not from the pair's last use, which may be hours old.
	replayedNow(t, pair.Primary.ConnString)

	echo := startEcho(t) // the core pools of the program need a server
	p := start(t, "lag", bin, "-server", echo.addr(), "-pg", withParam(t, pair.HA, "", "target_session_attrs", "read-write"))
	u, err := url.Parse(strings.TrimPrefix(p.line, "metrics "))
	if err != nil || u.Host == "" {
		t.Fatalf("shoalload printed %q, not its metrics URL", p.line)
	}
	base := startPrometheus(t, prom, fmt.Sprintf(`global:
  scrape_interval: 500ms
  scrape_timeout: 400ms
  evaluation_interval: 500ms
rule_files: [%q]
scrape_configs:
  - job_name: shoalload
    static_configs:
      - targets: [%q]
        labels: {scenario: %s}
`, rulesPath, u.Host, lagFiring.scenario))

	standby := fmt.Sprintf(`{pool_name=%q, host=%q}`, lagFiring.pool, pair.Standby.Addr)
	// Healthy: the read pool reads from the standby, and looks at its lag
	// again and again while the commits go on, for longer than the paused
	// standby below takes to fire (the bound, the "for", an evaluation).
	const looks = 8 // about one a second (RoleCheckPeriod)
	waitFor(t, 30*time.Second, "the healthy standby's lag read again and again", func() (bool, string) {
		got, err := instant(base, `changes(shoal_pool_host_last_check_timestamp_seconds`+standby+`[1m])`)
		if err != nil {
			return false, err.Error()
		}
		if len(got) != 1 {
			return false, fmt.Sprintf("%d series of the standby's last check", len(got))
		}
		n, _ := strconv.ParseFloat(fmt.Sprint(got[0].Value[1]), 64)
		return n >= looks, fmt.Sprintf("its lag read %v times", n)
	})
	checkHealthyLag(t, base, standby)

	// Paused: the standby receives the commits and applies none of them.
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	if err := pair.PauseReplay(ctx, pair.Standby, true); err != nil {
		t.Fatal(err)
	}
	paused := time.Now()
	var last []alert
	waitFor(t, 30*time.Second, "ShoalHostLagHigh firing for the paused standby", func() (bool, string) {
		var err error
		if last, err = alerts(base); err != nil {
			return false, err.Error()
		}
		return slices.ContainsFunc(last, func(a alert) bool {
			return a.State == "firing" && a.Labels["alertname"] == lagFiring.alert &&
				a.Labels["pool_name"] == lagFiring.pool && a.Labels["host"] == pair.Standby.Addr
		}), fmt.Sprintf("alerts: %+v", last)
	})
	for _, a := range last {
		if a.Labels["host"] != pair.Standby.Addr {
			t.Errorf("with only the standby paused: alert %s (%s) on host %q", a.Labels["alertname"], a.State, a.Labels["host"])
		}
	}
	t.Logf("ShoalHostLagHigh fired %s after the standby's replay paused, none while it replayed: %s in all",
		time.Since(paused).Round(100*time.Millisecond), time.Since(began).Round(100*time.Millisecond))
}

// checkHealthyLag fails the test when, over the last minute, the standby
// was read as anything but a standby within the live bound, or (over five) any alert
// of the run was pending or firing.
func checkHealthyLag(t *testing.T, base, standby string) {
	t.Helper()
	roles, err := instant(base, `shoal_pool_host_role`+standby)
	if err != nil {
		t.Fatal(err)
	}
	if len(roles) != 1 || roles[0].Metric["role"] != "standby" {
		t.Fatalf("the standby's role series: %+v, want one, role standby", roles)
	}
	worst, err := instant(base, `max_over_time(shoal_pool_host_lag_seconds`+standby+`[1m])`)
	if err != nil {
		t.Fatal(err)
	}
	if len(worst) != 1 {
		t.Fatalf("the standby's lag: %d series, want 1", len(worst))
	}
	if v, _ := strconv.ParseFloat(fmt.Sprint(worst[0].Value[1]), 64); v >= lagBoundLive {
		t.Fatalf("the healthy standby lagged %vs, at or above the live bound %ds", v, lagBoundLive)
	}
	// ALERTS has a sample for every evaluation that found an alert
	// pending or firing.
	if got, err := instant(base, `count_over_time(ALERTS[5m])`); err != nil || len(got) != 0 {
		t.Fatalf("alerts while the pair was healthy: %+v, %v", got, err)
	}
}

// replayedNow commits a transaction on the primary at cs and returns once
// its synchronous standby has applied it (remote_apply).
func replayedNow(t *testing.T, cs string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	c, err := pgx.Connect(ctx, cs)
	if err != nil {
		t.Fatalf("connect to the primary: %v", err)
	}
	defer c.Close(context.Background())
	if _, err := c.Exec(ctx, "SET synchronous_commit = remote_apply"); err != nil {
		t.Fatal(err)
	}
	if _, err := c.Exec(ctx, "SELECT pg_current_xact_id()"); err != nil {
		t.Fatalf("a commit replayed on the standby: %v", err)
	}
}
