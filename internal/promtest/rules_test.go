package promtest

import (
	"os/exec"
	"testing"
)

// TestRulesCheck: the shipped rules are valid for the real promtool.
func TestRulesCheck(t *testing.T) {
	out, err := exec.Command(promtoolBin(t), "check", "rules", repoFile("deploy", "prometheus", "shoal-rules.yml")).CombinedOutput()
	if err != nil {
		t.Fatalf("promtool check rules: %v\n%s", err, out)
	}
}

// TestRulesUnit runs the rules' unit tests (rules_test.yml): each alert
// fires on its fault's series after its "for", and not on a healthy pool.
func TestRulesUnit(t *testing.T) {
	cmd := exec.Command(promtoolBin(t), "test", "rules", "rules_test.yml")
	cmd.Dir = repoFile("deploy", "prometheus")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("promtool test rules: %v\n%s", err, out)
	}
}
