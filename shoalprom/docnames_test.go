package shoalprom_test

import (
	"maps"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalprom"
)

// docListed is a line of the package doc's metric lists:
// "//	name{labels}  type  what it is".
var docListed = regexp.MustCompile(`(?m)^//\t((?:db_client_connection|shoal_pool)_\w+)(?:\{[^}]*\})?\s+(gauge|counter|histogram)\s`)

// TestDocsNameEveryFamily: the metric lists of the package doc (with
// each family's type) and of docs/metrics.md name exactly the families a
// Collector exports, so that a metric renamed, added or dropped fails
// here until both say so.
func TestDocsNameEveryFamily(t *testing.T) {
	exported := exportedFamilies(t)

	raw, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	inDoc := map[string]string{}
	for _, m := range docListed.FindAllStringSubmatch(string(raw), -1) {
		inDoc[m[1]] = m[2]
	}
	compareNames(t, "doc.go", slices.Sorted(maps.Keys(inDoc)), exported)
	for name, typ := range inDoc {
		if want, ok := exported[name]; ok && !strings.EqualFold(want.String(), typ) {
			t.Errorf("doc.go lists %s as a %s; it is exported as a %s", name, typ, strings.ToLower(want.String()))
		}
	}

	raw, err = os.ReadFile("../docs/metrics.md")
	if err != nil {
		t.Fatal(err)
	}
	compareNames(t, "docs/metrics.md", metricsDocNames(t, string(raw)), exported)
}

// exportedFamilies gathers a Collector with a pool that reports every
// family: attached, with a Budget, and a host checked once.
func exportedFamilies(t *testing.T) map[string]dto.MetricType {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	c := newCollector(t, shoalprom.Options{})
	reg.MustRegister(c)
	m, err := c.Pool("orders")
	if err != nil {
		t.Fatal(err)
	}
	m.Attach(func() shoal.Stats { return shoal.Stats{MaxConns: 4, Share: 2, BudgetMembers: 2} })
	m.AttachHosts(func() []shoal.HostStat {
		return []shoal.HostStat{{Addr: "db:5432", Open: 1, Role: "primary", LastCheck: time.Unix(1_700_000_000, 0)}}
	})
	fams, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]dto.MetricType{}
	for _, f := range fams {
		out[f.GetName()] = f.GetType()
	}
	return out
}

// metricsDocNames returns the shoalprom metrics docs/metrics.md names: the
// first column of the table under "Prometheus: shoalprom", where
// "`db_client_connection_max`, `_idle_max`" names
// db_client_connection_idle_max too, and the per-host gauges under
// "Several servers behind one pool".
func metricsDocNames(t *testing.T, doc string) []string {
	t.Helper()
	tick := regexp.MustCompile("`([^`]+)`")
	var names []string
	for _, line := range strings.Split(section(t, doc, "## Prometheus: shoalprom"), "\n") {
		first, _, ok := strings.Cut(line, "` |")
		if !strings.HasPrefix(line, "| `") || !ok {
			continue
		}
		var base string
		for _, m := range tick.FindAllStringSubmatch(first+"`", -1) {
			name, _, _ := strings.Cut(m[1], "{")
			if strings.HasPrefix(name, "_") {
				name = base + name
			} else {
				base = name[:strings.LastIndex(name, "_")]
			}
			names = append(names, name)
		}
	}
	for _, m := range tick.FindAllStringSubmatch(section(t, doc, "## Several servers behind one pool"), -1) {
		if name, _, _ := strings.Cut(m[1], "{"); strings.HasPrefix(name, "shoal_pool_host_") {
			names = append(names, name)
		}
	}
	slices.Sort(names)
	return slices.Compact(names)
}

// section returns doc from the heading to the next heading of its level.
func section(t *testing.T, doc, heading string) string {
	t.Helper()
	_, rest, ok := strings.Cut(doc, "\n"+heading+"\n")
	if !ok {
		t.Fatalf("docs/metrics.md has no %q", heading)
	}
	end, _, _ := strings.Cut(rest, "\n"+heading[:strings.Index(heading, " ")+1])
	return end
}

// compareNames fails the test for each name where listed (sorted) and
// the exported families differ.
func compareNames(t *testing.T, where string, listed []string, exported map[string]dto.MetricType) {
	t.Helper()
	for _, name := range listed {
		if _, ok := exported[name]; !ok {
			t.Errorf("%s names %s, which a Collector does not export", where, name)
		}
	}
	for name := range exported {
		if !slices.Contains(listed, name) {
			t.Errorf("%s does not name %s, which a Collector exports", where, name)
		}
	}
}
