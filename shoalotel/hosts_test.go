package shoalotel_test

import (
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalotel"
	sdkmetric "go.opentelemetry.io/otel/sdk/metric"
	"go.opentelemetry.io/otel/sdk/metric/metricdata"
)

// The per-host instrument names.
const (
	hostOpen      = "shoal.pool.host.connection.open"
	hostRole      = "shoal.pool.host.role"
	hostLastCheck = "shoal.pool.host.last_check.timestamp"
	hostLag       = "shoal.pool.host.lag"
)

// hostPoints collects once and returns every point of the per-host
// instruments, as "name{attributes}" to value, failing when one has the
// wrong kind or unit. An instrument with no points is absent.
func hostPoints(t *testing.T, reader *sdkmetric.ManualReader) map[string]float64 {
	t.Helper()
	c := collect(t, reader)
	out := map[string]float64{}
	for _, name := range []string{hostOpen, hostRole} {
		unit := map[string]string{hostOpen: "{connection}", hostRole: "{host}"}[name]
		for a, v := range c.maybeSum(t, name, unit, false) {
			out[name+"{"+a+"}"] = float64(v)
		}
	}
	for _, name := range []string{hostLastCheck, hostLag} {
		m, ok := c[name]
		if !ok {
			continue
		}
		g, ok := m.Data.(metricdata.Gauge[float64])
		if !ok {
			t.Fatalf("instrument %s is %T, want a float64 gauge", name, m.Data)
		}
		if m.Unit != "s" {
			t.Errorf("instrument %s has unit %q, want s", name, m.Unit)
		}
		for _, p := range g.DataPoints {
			out[name+"{"+attrs(p.Attributes)+"}"] = p.Value
		}
	}
	return out
}

// checkHostPoints fails unless the per-host points are exactly want.
func checkHostPoints(t *testing.T, reader *sdkmetric.ManualReader, when string, want map[string]float64) {
	t.Helper()
	if got := hostPoints(t, reader); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("%s: per-host points\n got %v\nwant %v", when, got, want)
	}
}

// hostsVar is a hosts function whose answer a test changes between
// collections.
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

// newHostsPool returns metrics with a pool registered under name, and
// their reader.
func newHostsPool(t *testing.T, name string) (*shoalotel.Metrics, *shoalotel.PoolMetrics, *sdkmetric.ManualReader) {
	t.Helper()
	m, reader := newMetrics(t)
	p, err := m.Pool(name)
	if err != nil {
		t.Fatal(err)
	}
	return m, p, reader
}

// TestHostInstruments: each host's connections, role, last check and lag,
// with the pool's attribute and the server's address and port; a host
// never checked has no last-check or lag point; an address that is not
// host:port with a host and a numeric port goes whole into
// server.address; a pool with no hosts function
// has no per-host points.
func TestHostInstruments(t *testing.T) {
	m, p, reader := newHostsPool(t, "orders")
	plain, err := m.Pool("plain")
	if err != nil {
		t.Fatal(err)
	}
	plain.Attach(func() shoal.Stats { return shoal.Stats{MaxConns: 4} })
	checkHostPoints(t, reader, "nothing attached", map[string]float64{})

	checked := time.Unix(1_700_000_000, 250_000_000)
	p.AttachHosts(func() []shoal.HostStat {
		return []shoal.HostStat{
			{Addr: "db-a:5432", Open: 3, Role: "primary", LastCheck: checked},
			{Addr: "[2001:db8::1]:6432", Open: 1, Role: "standby", Lag: 1500 * time.Millisecond, LastCheck: checked.Add(time.Second)},
			{Addr: "/var/run/postgresql", Role: "unknown", LastError: "no such file"},
			{Addr: "db-d:postgres", Open: 2},
			{Addr: ":5432", Open: 1, Role: "primary"},
		}
	})
	const (
		pool = "db.client.connection.pool.name=orders,"
		a    = pool + "server.address=db-a,server.port=5432"
		b    = pool + "server.address=2001:db8::1,server.port=6432"
		sock = pool + "server.address=/var/run/postgresql"
		d    = pool + "server.address=db-d:postgres"
		e    = pool + "server.address=:5432"
	)
	checkHostPoints(t, reader, "five hosts", map[string]float64{
		hostOpen + "{" + a + "}":                            3,
		hostOpen + "{" + b + "}":                            1,
		hostOpen + "{" + sock + "}":                         0,
		hostOpen + "{" + d + "}":                            2,
		hostOpen + "{" + e + "}":                            1,
		hostRole + "{" + a + ",shoal.host.role=primary}":    1,
		hostRole + "{" + b + ",shoal.host.role=standby}":    1,
		hostRole + "{" + sock + ",shoal.host.role=unknown}": 1,
		hostRole + "{" + d + ",shoal.host.role=unknown}":    1,
		hostRole + "{" + e + ",shoal.host.role=primary}":    1,
		hostLastCheck + "{" + a + "}":                       1_700_000_000.25,
		hostLastCheck + "{" + b + "}":                       1_700_000_001.25,
		hostLag + "{" + a + "}":                             0,
		hostLag + "{" + b + "}":                             1.5,
	})
}

// TestHostRoleChange: after a failover the role point of each host shows
// its new role, and the point of its old role is gone.
func TestHostRoleChange(t *testing.T) {
	_, p, reader := newHostsPool(t, "orders")
	var hosts hostsVar
	p.AttachHosts(hosts.get)
	before := time.Unix(1_700_000_000, 0)
	after := before.Add(time.Minute)
	hosts.set(
		shoal.HostStat{Addr: "db-a:5432", Open: 2, Role: "primary", LastCheck: before},
		shoal.HostStat{Addr: "db-b:5432", Open: 1, Role: "standby", Lag: time.Second, LastCheck: before},
	)
	const (
		a = "db.client.connection.pool.name=orders,server.address=db-a,server.port=5432"
		b = "db.client.connection.pool.name=orders,server.address=db-b,server.port=5432"
	)
	checkHostPoints(t, reader, "before the failover", map[string]float64{
		hostOpen + "{" + a + "}":                         2,
		hostOpen + "{" + b + "}":                         1,
		hostRole + "{" + a + ",shoal.host.role=primary}": 1,
		hostRole + "{" + b + ",shoal.host.role=standby}": 1,
		hostLastCheck + "{" + a + "}":                    1_700_000_000,
		hostLastCheck + "{" + b + "}":                    1_700_000_000,
		hostLag + "{" + a + "}":                          0,
		hostLag + "{" + b + "}":                          1,
	})
	hosts.set(
		shoal.HostStat{Addr: "db-a:5432", Role: "read-only", LastCheck: after, LastError: "connection refused"},
		shoal.HostStat{Addr: "db-b:5432", Open: 3, Role: "primary", LastCheck: after},
	)
	checkHostPoints(t, reader, "after the failover", map[string]float64{
		hostOpen + "{" + a + "}":                           0,
		hostOpen + "{" + b + "}":                           3,
		hostRole + "{" + a + ",shoal.host.role=read-only}": 1,
		hostRole + "{" + b + ",shoal.host.role=primary}":   1,
		hostLastCheck + "{" + a + "}":                      1_700_000_060,
		hostLastCheck + "{" + b + "}":                      1_700_000_060,
		hostLag + "{" + a + "}":                            0,
		hostLag + "{" + b + "}":                            0,
	})
}

// TestHostsDetach: detaching ends the per-host points; attaching again
// replaces the function, and the replaced one's detach leaves its
// successor alone; Unregister ends them too.
func TestHostsDetach(t *testing.T) {
	_, p, reader := newHostsPool(t, "orders")
	one := func() []shoal.HostStat { return []shoal.HostStat{{Addr: "db-a:5432", Open: 1, Role: "primary"}} }
	two := func() []shoal.HostStat { return []shoal.HostStat{{Addr: "db-b:5432", Open: 2, Role: "standby"}} }
	points := func(host string, open float64, role string) map[string]float64 {
		a := "db.client.connection.pool.name=orders,server.address=" + host + ",server.port=5432"
		return map[string]float64{
			hostOpen + "{" + a + "}":                              open,
			hostRole + "{" + a + ",shoal.host.role=" + role + "}": 1,
		}
	}

	detachOne := p.AttachHosts(one)
	checkHostPoints(t, reader, "one attached", points("db-a", 1, "primary"))
	detachOne()
	checkHostPoints(t, reader, "one detached", map[string]float64{})
	detachOne()

	detachOne = p.AttachHosts(one)
	p.AttachHosts(two)
	checkHostPoints(t, reader, "two replaced one", points("db-b", 2, "standby"))
	detachOne()
	checkHostPoints(t, reader, "one's detach after two replaced it", points("db-b", 2, "standby"))

	p.AttachHosts(nil)
	checkHostPoints(t, reader, "nil attached", map[string]float64{})

	p.AttachHosts(two)
	p.Unregister()
	checkHostPoints(t, reader, "unregistered", map[string]float64{})
}

// TestHostsConcurrent: collections while hosts functions are attached,
// replaced and detached. The race detector is the judge; every collection
// must also show at most one function's hosts.
func TestHostsConcurrent(t *testing.T) {
	_, p, reader := newHostsPool(t, "orders")
	const rounds = 200
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range rounds {
			addr := fmt.Sprintf("db-%d:5432", i%3)
			detach := p.AttachHosts(func() []shoal.HostStat {
				return []shoal.HostStat{{Addr: addr, Open: i, Role: "primary", LastCheck: time.Unix(int64(i), 0)}}
			})
			if i%2 == 0 {
				detach()
			}
		}
	}()
	for range rounds {
		got := hostPoints(t, reader)
		if len(got) != 0 && len(got) != 4 {
			t.Fatalf("a collection saw %d per-host points, want 0 or 4 (one host): %v", len(got), got)
		}
	}
	wg.Wait()
}
