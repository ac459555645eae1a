package promtest

import (
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"
)

// shippedRule is what the table in docs/operating.md says of a rule.
type shippedRule struct {
	expr, forDur, severity string
}

var (
	ruleStart    = regexp.MustCompile(`(?m)^\s+- alert: (\w+)$`)
	ruleFor      = regexp.MustCompile(`(?m)^\s+for: (\S+)$`)
	ruleSeverity = regexp.MustCompile(`(?m)^\s+severity: (\S+)$`)
	ruleExpr     = regexp.MustCompile(`(?ms)^\s+expr: \|\n(.*?)\n\s+(?:for|labels):`)
	// A row of the alert table: | `Name` | fires when | severity |
	docRow = regexp.MustCompile("(?m)^\\| `(Shoal\\w+)` \\| (.+?) \\| (\\w+) \\|$")
	// A duration in the table's prose, such as "for 5m" or "above 100ms".
	docDuration = regexp.MustCompile(`\b(\d+)(ms|s|m)\b`)
)

// shippedRules reads the rules of deploy/prometheus/shoal-rules.yml.
func shippedRules(t *testing.T) map[string]shippedRule {
	t.Helper()
	raw, err := os.ReadFile(repoFile("deploy", "prometheus", "shoal-rules.yml"))
	if err != nil {
		t.Fatal(err)
	}
	text := string(raw)
	rules := map[string]shippedRule{}
	starts := ruleStart.FindAllStringSubmatchIndex(text, -1)
	for i, s := range starts {
		end := len(text)
		if i+1 < len(starts) {
			end = starts[i+1][0]
		}
		block := text[s[0]:end]
		var r shippedRule
		if m := ruleFor.FindStringSubmatch(block); m != nil {
			r.forDur = m[1]
		}
		if m := ruleSeverity.FindStringSubmatch(block); m != nil {
			r.severity = m[1]
		}
		if m := ruleExpr.FindStringSubmatch(block); m != nil {
			r.expr = m[1]
		}
		rules[text[s[2]:s[3]]] = r
	}
	return rules
}

// The alert table of docs/operating.md is what operators read when they
// page: it must name every shipped rule and no other, with the rule's
// severity, its "for", and every other bound it states (a threshold such as
// "above 100ms", a window such as "in the last 15m") in the expression.
func TestOperatingDocAlertTableMatchesTheRules(t *testing.T) {
	rules := shippedRules(t)
	if len(rules) == 0 {
		t.Fatal("no rule read from shoal-rules.yml")
	}
	raw, err := os.ReadFile(repoFile("docs", "operating.md"))
	if err != nil {
		t.Fatal(err)
	}
	var documented []string
	for _, row := range docRow.FindAllStringSubmatch(string(raw), -1) {
		name, fires, severity := row[1], row[2], row[3]
		documented = append(documented, name)
		r, ok := rules[name]
		if !ok {
			t.Errorf("operating.md lists %s, which shoal-rules.yml does not have", name)
			continue
		}
		if severity != r.severity {
			t.Errorf("%s: operating.md says severity %s, the rule has %s", name, severity, r.severity)
		}
		forText := ""
		if i := strings.LastIndex(fires, ", for "); i >= 0 {
			forText, fires = fires[i+len(", for "):], fires[:i]
		}
		if forText != r.forDur {
			t.Errorf("%s: operating.md says for %q, the rule has for %q", name, forText, r.forDur)
		}
		for _, m := range docDuration.FindAllStringSubmatch(fires, -1) {
			if !exprHasBound(r.expr, m[0], m[1], m[2]) {
				t.Errorf("%s: operating.md says %q, which the rule's expression does not hold: %s", name, m[0], r.expr)
			}
		}
	}
	for name := range rules {
		if !slices.Contains(documented, name) {
			t.Errorf("shoal-rules.yml has %s, which operating.md's table does not list", name)
		}
	}
}

// exprHasBound reports whether expr states the duration the table gives:
// as a range window ("[15m]") or as a threshold in seconds ("> 0.1").
func exprHasBound(expr, text, num, unit string) bool {
	if strings.Contains(expr, "["+text+"]") {
		return true
	}
	n, _ := strconv.Atoi(num)
	d := time.Duration(n) * map[string]time.Duration{"ms": time.Millisecond, "s": time.Second, "m": time.Minute}[unit]
	return regexp.MustCompile(`> ` + regexp.QuoteMeta(strconv.FormatFloat(d.Seconds(), 'f', -1, 64)) + `\b`).MatchString(expr)
}
