package shoalprom_test

import (
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/poolmetrics/metricstest"
	"github.com/shoalpool/shoal/shoalprom"
)

// A constant label named host (or role) would clash with the per-host
// gauges' own: the Collector still registers and exports the rest, and
// leaves the per-host gauges out rather than fail as a whole.
func TestHostsConstLabelClash(t *testing.T) {
	for _, name := range []string{shoalprom.LabelHost, shoalprom.LabelRole} {
		opts := shoalprom.Options{ConstLabels: prometheus.Labels{name: "x"}}
		reg := prometheus.NewPedanticRegistry()
		c := newCollector(t, opts)
		if err := reg.Register(c); err != nil {
			t.Fatalf("ConstLabels %s: the Collector does not register: %v", name, err)
		}
		m, err := c.Pool("p")
		if err != nil {
			t.Fatal(err)
		}
		m.AttachHosts(func() []shoal.HostStat { return []shoal.HostStat{{Addr: "db:5432", Open: 1, Role: "primary"}} })
		got := (&promSet{opts: opts, c: c, reg: reg}).Read(t)
		if hosts := got.Only(metricstest.HostNames...); len(hosts) != 0 {
			t.Errorf("ConstLabels %s: per-host series %v, want none", name, hosts)
		}
		if len(got) == 0 {
			t.Errorf("ConstLabels %s: nothing gathered", name)
		}
	}
}
