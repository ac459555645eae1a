package integration_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/shoalpool/shoal/internal/pgpair"
	"github.com/shoalpool/shoal/internal/pgtest"
	"github.com/shoalpool/shoal/shoalpgx"
	"github.com/shoalpool/shoal/shoalprom"
)

// A pool's Hosts and its read pool's, attached to shoalprom under two
// names, show per host each pool's own connections: the pool's on the
// primary, the read pool's on the standby, each host under its role as
// the pool that uses it last saw it.
func TestHostsExportedByShoalprom(t *testing.T) {
	pair := pgpair.ForTest(t)
	cfg, err := shoalpgx.ParseConfig(pair.HA)
	if err != nil {
		t.Fatal(err)
	}
	cfg.RoleCheckPeriod = 0
	pool, err := shoalpgx.NewWithConfig(context.Background(), cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(pool.Close)
	// A connection each: a statement through the pool and its read pool.
	ctx := pgtest.Ctx(t)
	for _, q := range []interface {
		QueryRow(context.Context, string, ...any) pgx.Row
	}{pool, pool.Reads()} {
		var port int
		if err := q.QueryRow(ctx, "SELECT inet_server_port()").Scan(&port); err != nil {
			t.Fatalf("a query: %v", err)
		}
	}

	reg := prometheus.NewPedanticRegistry()
	collector, err := shoalprom.New(shoalprom.Options{})
	if err != nil {
		t.Fatal(err)
	}
	reg.MustRegister(collector)
	for name, hosts := range map[string]func() []shoalpgx.HostStat{"orders": pool.Hosts, "orders/reads": pool.Reads().Hosts} {
		metrics, err := collector.Pool(name)
		if err != nil {
			t.Fatal(err)
		}
		defer metrics.Unregister()
		defer metrics.AttachHosts(hosts)()
	}

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	type series struct{ pool, host string }
	open := map[series]float64{}
	role := map[series]string{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			at := series{labels[shoalprom.LabelPoolName], labels[shoalprom.LabelHost]}
			switch f.GetName() {
			case "shoal_pool_host_connection_open":
				open[at] = m.GetGauge().GetValue()
			case "shoal_pool_host_role":
				role[at] = labels[shoalprom.LabelRole]
			}
		}
	}
	for _, c := range []struct {
		pool       string
		used, idle pgpair.Node
		role       string
	}{
		{"orders", pair.Primary, pair.Standby, shoalpgx.RolePrimary},
		{"orders/reads", pair.Standby, pair.Primary, shoalpgx.RoleStandby},
	} {
		used, idle := series{c.pool, c.used.Addr}, series{c.pool, c.idle.Addr}
		if open[used] < 1 || role[used] != c.role || open[idle] != 0 {
			t.Errorf("%s: open %v on %s, role %q, open %v on %s; want at least 1, %q and 0 (all: %v, %v)",
				c.pool, open[used], c.used.Addr, role[used], open[idle], c.idle.Addr, c.role, open, role)
		}
	}
}
