package promtest

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// firing is an alert of the shipped rules that must fire, on the pool
// named, in one scenario of the live run.
type firing struct{ scenario, alert, pool string }

// expected are the alerts each fault must fire. The healthy scenario must
// fire none.
var expected = []firing{
	{"exhaust", "ShoalPoolSaturated", "orders"},
	{"exhaust", "ShoalAcquireWaitHigh", "orders"},
	{"exhaust", "ShoalAcquireTimeouts", "orders"},
	{"leak", "ShoalLeaseLeaked", "orders"},
	{"serverdown", "ShoalDialsFailing", "orders"},
	{"serverdown", "ShoalServerDown", "orders"},
	{"starve", "ShoalBudgetStarved", "reports"},
	{"starve", "ShoalBudgetStarved", "batch"},
	{"noprimary", "ShoalNoPrimary", "accounts"},
}

// unitTestedOnly are the rules no live scenario can bring about on the
// test machine, with why; rules_test.yml covers them. None today: every
// rule fires in TestLive or TestLiveHostLag.
var unitTestedOnly []string

// forDuration matches a rule's "for:", which the live runs shorten.
var forDuration = regexp.MustCompile(`(?m)^(\s+)for: \S+$`)

// lagBound matches ShoalHostLagHigh's bound on the lag, which the live run
// lowers to lagBoundLive: a standby whose replay is paused takes as many
// seconds as the bound to pass it.
var lagBound = regexp.MustCompile(`(?m)^(\s+shoal_pool_host_lag_seconds > )\d+$`)

// lagBoundLive is ShoalHostLagHigh's bound in the live runs, in seconds:
// far above what a healthy synchronous standby on loopback lags (a few
// milliseconds), a few seconds of a paused one.
const lagBoundLive = 2

// liveRules writes the shipped rules as the live runs evaluate them, with
// every "for" cut to 1s and ShoalHostLagHigh's bound to lagBoundLive, their
// expressions and windows otherwise as shipped, and returns the file's
// path. It fails the test when a rule has no live run.
func liveRules(t *testing.T) string {
	t.Helper()
	rules, err := os.ReadFile(repoFile("deploy", "prometheus", "shoal-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	checkCoverage(t, string(rules))
	if n := len(lagBound.FindAll(rules, -1)); n != 1 {
		t.Fatalf("shoal-rules.yml has %d lines \"shoal_pool_host_lag_seconds > N\", want ShoalHostLagHigh's one", n)
	}
	rules = lagBound.ReplaceAll(rules, []byte(fmt.Sprintf("${1}%d", lagBoundLive)))
	rules = forDuration.ReplaceAll(rules, []byte("${1}for: 1s"))
	path := filepath.Join(t.TempDir(), "rules.yml")
	if err := os.WriteFile(path, rules, 0o644); err != nil {
		t.Fatal(err)
	}
	return path
}

// TestLive runs the program of the project (shoalload) in six scenarios,
// a healthy one and one per fault, all scraped by one real Prometheus that
// evaluates the shipped rules (liveRules). Each fault's alerts must fire
// on its pool, the healthy run must fire none, and every query of the
// dashboard must return series.
func TestLive(t *testing.T) {
	prom := prometheusBin(t)
	pg := need(t, "SHOAL_TEST_POSTGRES", "the PostgreSQL the pgx pool queries")
	bin := buildProgram(t)
	began := time.Now()
	rulesPath := liveRules(t)

	echo := startEcho(t)   // every scenario's server but serverdown's
	doomed := startEcho(t) // serverdown's, stopped once it is scraped
	healthyPG := withParam(t, pg, "", "target_session_attrs", "read-write")
	// Hosts that are all down: no primary to write to.
	downPG := withParam(t, pg, loopback(freePort(t))+","+loopback(freePort(t)), "target_session_attrs", "read-write")

	scenarios := []struct{ name, server, fault, pg string }{
		{"healthy", echo.addr(), "none", healthyPG},
		{"exhaust", echo.addr(), "exhaust", ""},
		{"leak", echo.addr(), "leak", ""},
		{"serverdown", doomed.addr(), "serverdown", ""},
		{"starve", echo.addr(), "starve", ""},
		{"noprimary", echo.addr(), "none", downPG},
	}
	var scrape strings.Builder
	for _, s := range scenarios {
		args := []string{"-server", s.server, "-fault", s.fault}
		if s.pg != "" {
			args = append(args, "-pg", s.pg)
		}
		p := start(t, s.name, bin, args...)
		u, err := url.Parse(strings.TrimPrefix(p.line, "metrics "))
		if err != nil || u.Host == "" {
			t.Fatalf("%s printed %q, not its metrics URL", s.name, p.line)
		}
		fmt.Fprintf(&scrape, "      - targets: [%q]\n        labels: {scenario: %s}\n", u.Host, s.name)
	}
	base := startPrometheus(t, prom, fmt.Sprintf(`global:
  scrape_interval: 500ms
  scrape_timeout: 400ms
  evaluation_interval: 500ms
rule_files: [%q]
scrape_configs:
  - job_name: shoalload
    static_configs:
%s`, rulesPath, scrape.String()))

	waitFor(t, 30*time.Second, "every target scraped", func() (bool, string) {
		ts, err := targets(base)
		if err != nil {
			return false, err.Error()
		}
		up := 0
		for _, tg := range ts {
			if tg.Health == "up" {
				up++
			}
		}
		return up == len(scenarios), fmt.Sprintf("%d of %d targets up: %+v", up, len(scenarios), ts)
	})
	doomed.stop() // the server goes down, with every connection to it

	waitFor(t, 90*time.Second, "every fault's alerts firing", func() (bool, string) {
		last, err := alerts(base)
		if err != nil {
			return false, err.Error()
		}
		var missing []string
		for _, want := range expected {
			if !slices.ContainsFunc(last, func(a alert) bool {
				return a.State == "firing" && a.Labels["scenario"] == want.scenario &&
					a.Labels["alertname"] == want.alert && a.Labels["pool_name"] == want.pool
			}) {
				missing = append(missing, fmt.Sprintf("%s on %s/%s", want.alert, want.scenario, want.pool))
			}
		}
		return len(missing) == 0, "not firing: " + strings.Join(missing, ", ")
	})
	// The healthy scenario ran as long as the faults, under the same rules,
	// and no alert of it was pending or firing at any evaluation since
	// Prometheus started: ALERTS keeps a sample for each.
	window := time.Since(began).Round(time.Second) + time.Second
	ever, err := instant(base, fmt.Sprintf(`max_over_time(ALERTS{scenario="healthy"}[%ds])`, int(window.Seconds())))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range ever {
		t.Errorf("the healthy run had alert %s (%s) on pool %s", s.Metric["alertname"], s.Metric["alertstate"], s.Metric["pool_name"])
	}
	checkDashboard(t, base)
	t.Logf("every alert fired in its fault, none at any time in the healthy run, every panel has series: %s", time.Since(began).Round(100*time.Millisecond))
}

// checkCoverage fails the test when a rule of the shipped file is neither
// brought about live nor named as unit-tested only.
func checkCoverage(t *testing.T, rules string) {
	t.Helper()
	covered := append(slices.Clone(unitTestedOnly), lagFiring.alert)
	for _, f := range expected {
		covered = append(covered, f.alert)
	}
	for _, m := range regexp.MustCompile(`(?m)^\s+- alert: (\S+)$`).FindAllStringSubmatch(rules, -1) {
		if !slices.Contains(covered, m[1]) {
			t.Errorf("rule %s has no live scenario: add one to a live test, or to unitTestedOnly with why", m[1])
		}
	}
}

// withParam returns the connection string cs with its hosts replaced by
// hosts (when not empty) and the query parameter key set to value.
func withParam(t *testing.T, cs, hosts, key, value string) string {
	t.Helper()
	u, err := url.Parse(cs)
	if err != nil {
		t.Fatalf("SHOAL_TEST_POSTGRES is not a URL: %v", err)
	}
	if hosts != "" {
		u.Host = hosts
	}
	q := u.Query()
	q.Set(key, value)
	u.RawQuery = q.Encode()
	return u.String()
}

// waitFor polls cond every 250ms until it holds, failing the test with
// cond's last word after limit.
func waitFor(t *testing.T, limit time.Duration, what string, cond func() (bool, string)) {
	t.Helper()
	deadline := time.Now().Add(limit)
	for {
		ok, why := cond()
		if ok {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %s: %s", what, limit, why)
		}
		time.Sleep(250 * time.Millisecond)
	}
}
