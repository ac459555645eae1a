package shoalotel_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// docListed is a line of the package doc's instrument lists:
// "//	name  kind  unit  what it is".
var docListed = regexp.MustCompile(`(?m)^//\t((?:db\.client\.connection|shoal\.pool)\.[\w.]+)\s+(observable up-down counter|observable counter|observable gauge|counter|histogram)\s+(\S+)\s`)

// TestDocListsEveryInstrument: the instrument lists of the package doc
// name exactly the instruments Metrics reports, each with its kind and
// unit, so that an instrument renamed, added, dropped or given another
// unit fails here until the doc says so.
func TestDocListsEveryInstrument(t *testing.T) {
	m, reader := newMetrics(t)
	p, err := m.Pool("orders")
	if err != nil {
		t.Fatal(err)
	}
	// A pool that reports every instrument: attached, with a Budget, a
	// host checked once, and an event for each histogram.
	p.Attach(func() shoal.Stats { return shoal.Stats{MaxConns: 4, Share: 2, BudgetMembers: 2} })
	p.AttachHosts(func() []shoal.HostStat {
		return []shoal.HostStat{{Addr: "db:5432", Open: 1, Role: "primary", LastCheck: time.Unix(1_700_000_000, 0)}}
	})
	p.ObserveDial(time.Millisecond, nil)
	p.ObserveAcquire(time.Millisecond)
	p.ObserveRelease(time.Millisecond)
	got := map[string][2]string{} // name: kind, unit
	for name, inst := range collect(t, reader) {
		kind := "?"
		switch d := inst.Data.(type) {
		case metricdata.Sum[int64]:
			kind = "up-down counter"
			if d.IsMonotonic {
				kind = "counter"
			}
		case metricdata.Histogram[float64]:
			kind = "histogram"
		case metricdata.Gauge[float64]:
			kind = "gauge"
		}
		got[name] = [2]string{kind, inst.Unit}
	}

	raw, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	listed := map[string]bool{}
	for _, l := range docListed.FindAllStringSubmatch(string(raw), -1) {
		name, kind, unit := l[1], l[2], l[3]
		listed[name] = true
		// What is observable does not show in the data: the doc says
		// it, the data says the rest.
		kind = strings.TrimPrefix(kind, "observable ")
		g, ok := got[name]
		switch {
		case !ok:
			t.Errorf("doc.go lists %s, which Metrics does not report", name)
		case g != [2]string{kind, unit}:
			t.Errorf("doc.go lists %s: %s, unit %s; it is reported: %s, unit %s", name, kind, unit, g[0], g[1])
		}
	}
	for name := range got {
		if !listed[name] {
			t.Errorf("doc.go does not list %s, which Metrics reports", name)
		}
	}
}
