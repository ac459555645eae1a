package promtest

import (
	"encoding/json"
	"os"
	"regexp"
	"strings"
	"testing"
)

// dashboard is what the test reads of the Grafana dashboard.
type dashboard struct {
	Panels     []panel `json:"panels"`
	Templating struct {
		List []struct {
			Name  string `json:"name"`
			Type  string `json:"type"`
			Query any    `json:"query"`
		} `json:"list"`
	} `json:"templating"`
	Annotations struct {
		List []struct {
			Name string `json:"name"`
			Expr string `json:"expr"`
		} `json:"list"`
	} `json:"annotations"`
}

type panel struct {
	Title   string  `json:"title"`
	Type    string  `json:"type"`
	Panels  []panel `json:"panels"` // a collapsed row's
	Targets []struct {
		RefID string `json:"refId"`
		Expr  string `json:"expr"`
	} `json:"targets"`
}

func loadDashboard(t *testing.T) dashboard {
	t.Helper()
	raw, err := os.ReadFile(repoFile("deploy", "grafana", "shoal-dashboard.json"))
	if err != nil {
		t.Fatal(err)
	}
	var d dashboard
	if err := json.Unmarshal(raw, &d); err != nil {
		t.Fatalf("shoal-dashboard.json: %v", err)
	}
	return d
}

// grafanaVars are the variables the dashboard's queries use, as Grafana
// would fill them with "All" selected and a short run's rate interval.
var grafanaVars = strings.NewReplacer(
	"$job", ".*", "$instance", ".*", "$pool", ".*",
	"$__rate_interval", "10s",
)

var labelValues = regexp.MustCompile(`^label_values\((.+),\s*(\w+)\)$`)

// checkDashboard runs every query of the dashboard against the live
// Prometheus: every panel's targets, its variables' label_values and its
// alert annotation must return series.
func checkDashboard(t *testing.T, base string) {
	t.Helper()
	d := loadDashboard(t)
	run := func(what, expr string) {
		t.Helper()
		got, err := instant(base, grafanaVars.Replace(expr))
		switch {
		case err != nil:
			t.Errorf("%s: %v", what, err)
		case len(got) == 0:
			t.Errorf("%s returns no series: %s", what, expr)
		}
	}
	var walk func([]panel)
	queries := 0
	walk = func(ps []panel) {
		for _, p := range ps {
			walk(p.Panels)
			for _, tg := range p.Targets {
				queries++
				run("panel "+p.Title+" "+tg.RefID, tg.Expr)
			}
			if p.Type != "row" && len(p.Targets) == 0 {
				t.Errorf("panel %q has no query", p.Title)
			}
		}
	}
	walk(d.Panels)
	for _, v := range d.Templating.List {
		if v.Type != "query" {
			continue
		}
		q, _ := v.Query.(map[string]any)
		s, _ := q["query"].(string)
		m := labelValues.FindStringSubmatch(s)
		if m == nil {
			t.Errorf("variable %s: query %q is not label_values(metric, label)", v.Name, s)
			continue
		}
		run("variable "+v.Name, "group by ("+m[2]+") ("+m[1]+")")
	}
	for _, a := range d.Annotations.List {
		run("annotation "+a.Name, a.Expr)
	}
	if queries < 19 {
		t.Errorf("the dashboard has %d queries; expected every panel's", queries)
	}
}
