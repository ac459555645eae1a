package shoalprom_test

import (
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	dto "github.com/prometheus/client_model/go"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalprom"
)

// The per-host metric names.
const (
	hostOpen      = "shoal_pool_host_connection_open"
	hostRole      = "shoal_pool_host_role"
	hostLastCheck = "shoal_pool_host_last_check_timestamp_seconds"
	hostLag       = "shoal_pool_host_lag_seconds"
)

// hostSeries gathers reg and returns every series of the per-host
// families (with or without a namespace in front), as "name{labels}" to
// value; a family with no series is absent.
func hostSeries(t *testing.T, reg *prometheus.Registry) map[string]float64 {
	t.Helper()
	fam, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	for _, f := range fam {
		name := f.GetName()
		for _, family := range []string{hostOpen, hostRole, hostLastCheck, hostLag} {
			if !strings.HasSuffix(name, family) {
				continue
			}
			if f.GetType() != dto.MetricType_GAUGE {
				t.Errorf("%s has type %s, want a gauge", name, f.GetType())
			}
			for _, m := range f.GetMetric() {
				out[name+"{"+labelsOf(m)+"}"] = value(m)
			}
		}
	}
	return out
}

// checkHostSeries fails unless the per-host series are exactly want.
func checkHostSeries(t *testing.T, reg *prometheus.Registry, when string, want map[string]float64) {
	t.Helper()
	if got := hostSeries(t, reg); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: per-host series\n got %v\nwant %v", when, got, want)
	}
}

// hostsVar is a hosts function whose answer a test changes between scrapes.
type hostsVar struct {
	mu    sync.Mutex
	hosts []shoal.HostStat
}

func (v *hostsVar) set(hosts ...shoal.HostStat) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.hosts = hosts
}

func (v *hostsVar) get() []shoal.HostStat {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]shoal.HostStat(nil), v.hosts...)
}

// newHostsCollector returns a registry with a collector, and the metrics
// of a pool registered in it under name.
func newHostsCollector(t *testing.T, opts shoalprom.Options, name string) (*prometheus.Registry, *shoalprom.Collector, *shoalprom.PoolMetrics) {
	t.Helper()
	reg := prometheus.NewPedanticRegistry()
	c := newCollector(t, opts)
	reg.MustRegister(c)
	m, err := c.Pool(name)
	if err != nil {
		t.Fatal(err)
	}
	return reg, c, m
}

// TestHostGauges: each host's connections, role, last check and lag, with
// the pool's label and the host's; a host never checked has no last-check
// or lag series; a pool with no hosts function has no per-host series.
func TestHostGauges(t *testing.T) {
	reg, c, m := newHostsCollector(t, shoalprom.Options{}, "orders")
	plain, err := c.Pool("plain")
	if err != nil {
		t.Fatal(err)
	}
	plain.Attach(func() shoal.Stats { return shoal.Stats{MaxConns: 4} })
	checkHostSeries(t, reg, "nothing attached", map[string]float64{})

	checked := time.Unix(1_700_000_000, 250_000_000)
	m.AttachHosts(func() []shoal.HostStat {
		return []shoal.HostStat{
			{Addr: "db-a:5432", Open: 3, Role: "primary", LastCheck: checked},
			{Addr: "db-b:5432", Open: 1, Role: "standby", Lag: 1500 * time.Millisecond, LastCheck: checked.Add(time.Second)},
			{Addr: "db-c:5432", Role: "unknown", LastError: "connection refused"},
		}
	})
	const a, b, cc = "host=db-a:5432,pool_name=orders", "host=db-b:5432,pool_name=orders", "host=db-c:5432,pool_name=orders"
	checkHostSeries(t, reg, "three hosts", map[string]float64{
		hostOpen + "{" + a + "}":               3,
		hostOpen + "{" + b + "}":               1,
		hostOpen + "{" + cc + "}":              0,
		hostRole + "{" + a + ",role=primary}":  1,
		hostRole + "{" + b + ",role=standby}":  1,
		hostRole + "{" + cc + ",role=unknown}": 1,
		hostLastCheck + "{" + a + "}":          1_700_000_000.25,
		hostLastCheck + "{" + b + "}":          1_700_000_001.25,
		hostLag + "{" + a + "}":                0,
		hostLag + "{" + b + "}":                1.5,
	})
}

// TestHostRoleChange: after a failover the role series of each host shows
// its new role, and the series of its old role is gone.
func TestHostRoleChange(t *testing.T) {
	reg, _, m := newHostsCollector(t, shoalprom.Options{}, "orders")
	var hosts hostsVar
	m.AttachHosts(hosts.get)
	before := time.Unix(1_700_000_000, 0)
	after := before.Add(time.Minute)
	hosts.set(
		shoal.HostStat{Addr: "db-a:5432", Open: 2, Role: "primary", LastCheck: before},
		shoal.HostStat{Addr: "db-b:5432", Open: 1, Role: "standby", Lag: time.Second, LastCheck: before},
	)
	const a, b = "host=db-a:5432,pool_name=orders", "host=db-b:5432,pool_name=orders"
	checkHostSeries(t, reg, "before the failover", map[string]float64{
		hostOpen + "{" + a + "}":              2,
		hostOpen + "{" + b + "}":              1,
		hostRole + "{" + a + ",role=primary}": 1,
		hostRole + "{" + b + ",role=standby}": 1,
		hostLastCheck + "{" + a + "}":         1_700_000_000,
		hostLastCheck + "{" + b + "}":         1_700_000_000,
		hostLag + "{" + a + "}":               0,
		hostLag + "{" + b + "}":               1,
	})
	hosts.set(
		shoal.HostStat{Addr: "db-a:5432", Open: 0, Role: "read-only", LastCheck: after, LastError: "connection refused"},
		shoal.HostStat{Addr: "db-b:5432", Open: 3, Role: "primary", LastCheck: after},
	)
	checkHostSeries(t, reg, "after the failover", map[string]float64{
		hostOpen + "{" + a + "}":                0,
		hostOpen + "{" + b + "}":                3,
		hostRole + "{" + a + ",role=read-only}": 1,
		hostRole + "{" + b + ",role=primary}":   1,
		hostLastCheck + "{" + a + "}":           1_700_000_060,
		hostLastCheck + "{" + b + "}":           1_700_000_060,
		hostLag + "{" + a + "}":                 0,
		hostLag + "{" + b + "}":                 0,
	})
}

// TestHostsDetach: detaching ends the per-host series; attaching again
// replaces the function, and the replaced one's detach leaves its
// successor alone; Unregister ends them too.
func TestHostsDetach(t *testing.T) {
	reg, _, m := newHostsCollector(t, shoalprom.Options{Namespace: "app"}, "orders")
	one := func() []shoal.HostStat { return []shoal.HostStat{{Addr: "db-a:5432", Open: 1, Role: "primary"}} }
	two := func() []shoal.HostStat { return []shoal.HostStat{{Addr: "db-b:5432", Open: 2, Role: "standby"}} }
	series := func(addr string, open float64, role string) map[string]float64 {
		labels := "host=" + addr + ",pool_name=orders"
		return map[string]float64{
			"app_" + hostOpen + "{" + labels + "}":                   open,
			"app_" + hostRole + "{" + labels + ",role=" + role + "}": 1,
		}
	}
	detachOne := m.AttachHosts(one)
	checkHostSeries(t, reg, "one attached", series("db-a:5432", 1, "primary"))
	detachOne()
	checkHostSeries(t, reg, "one detached", map[string]float64{})
	detachOne()

	detachOne = m.AttachHosts(one)
	m.AttachHosts(two)
	checkHostSeries(t, reg, "two replaced one", series("db-b:5432", 2, "standby"))
	detachOne()
	checkHostSeries(t, reg, "one's detach after two replaced it", series("db-b:5432", 2, "standby"))

	m.AttachHosts(nil)
	checkHostSeries(t, reg, "nil attached", map[string]float64{})

	m.AttachHosts(two)
	m.Unregister()
	checkHostSeries(t, reg, "unregistered", map[string]float64{})
}

// TestHostsSameAddr: two entries for one address (the pool's and its read
// pool's, say) are one series each, not a failed scrape.
func TestHostsSameAddr(t *testing.T) {
	reg, _, m := newHostsCollector(t, shoalprom.Options{}, "orders")
	older := time.Unix(1_700_000_000, 0)
	m.AttachHosts(func() []shoal.HostStat {
		return []shoal.HostStat{
			{Addr: "db-a:5432", Open: 2, Role: "standby", Lag: time.Second, LastCheck: older},
			{Addr: "db-a:5432", Open: 3, Role: "primary", LastCheck: older.Add(time.Second)},
			{Addr: "", Open: 4, Role: "primary"},
		}
	})
	const a = "host=db-a:5432,pool_name=orders"
	checkHostSeries(t, reg, "one address twice", map[string]float64{
		hostOpen + "{" + a + "}":              5,
		hostRole + "{" + a + ",role=primary}": 1,
		hostLastCheck + "{" + a + "}":         1_700_000_001,
		hostLag + "{" + a + "}":               0,
	})
}

// TestHostsConcurrent: scrapes while hosts functions are attached,
// replaced and detached. The race detector is the judge; every scrape
// must also succeed and show at most one function's hosts.
func TestHostsConcurrent(t *testing.T) {
	reg, _, m := newHostsCollector(t, shoalprom.Options{}, "orders")
	const rounds = 200
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range rounds {
			addr := fmt.Sprintf("db-%d:5432", i%3)
			detach := m.AttachHosts(func() []shoal.HostStat {
				return []shoal.HostStat{{Addr: addr, Open: i, Role: "primary", LastCheck: time.Unix(int64(i), 0)}}
			})
			if i%2 == 0 {
				detach()
			}
		}
	}()
	for range rounds {
		got := hostSeries(t, reg)
		if len(got) != 0 && len(got) != 4 {
			t.Fatalf("a scrape saw %d per-host series, want 0 or 4 (one host): %v", len(got), got)
		}
	}
	wg.Wait()
}

// A constant label named host (or role) would clash with the per-host
// gauges' own: the Collector still registers and exports the rest, and
// leaves the per-host gauges out rather than fail as a whole.
func TestHostsConstLabelClash(t *testing.T) {
	for _, name := range []string{shoalprom.LabelHost, shoalprom.LabelRole} {
		reg := prometheus.NewPedanticRegistry()
		c := newCollector(t, shoalprom.Options{ConstLabels: prometheus.Labels{name: "x"}})
		if err := reg.Register(c); err != nil {
			t.Fatalf("ConstLabels %s: the Collector does not register: %v", name, err)
		}
		m, err := c.Pool("p")
		if err != nil {
			t.Fatal(err)
		}
		m.AttachHosts(func() []shoal.HostStat { return []shoal.HostStat{{Addr: "db:5432", Open: 1, Role: "primary"}} })
		if got := hostSeries(t, reg); len(got) != 0 {
			t.Errorf("ConstLabels %s: per-host series %v, want none", name, got)
		}
		fam, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		if len(fam) == 0 {
			t.Errorf("ConstLabels %s: nothing gathered", name)
		}
	}
}
