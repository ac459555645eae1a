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

// A pool's Hosts, attached to shoalprom, show per host: the primary with
// the pool's connection and the standby with the read pool's, each under
// its role.
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
	metrics, err := collector.Pool("orders")
	if err != nil {
		t.Fatal(err)
	}
	defer metrics.Unregister()
	defer metrics.AttachHosts(pool.Hosts)()

	families, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	open := map[string]float64{}
	role := map[string]string{}
	for _, f := range families {
		for _, m := range f.GetMetric() {
			labels := map[string]string{}
			for _, l := range m.GetLabel() {
				labels[l.GetName()] = l.GetValue()
			}
			switch f.GetName() {
			case "shoal_pool_host_connection_open":
				open[labels["host"]] = m.GetGauge().GetValue()
			case "shoal_pool_host_role":
				role[labels["host"]] = labels["role"]
			}
		}
	}
	for _, c := range []struct {
		node pgpair.Node
		role string
	}{{pair.Primary, shoalpgx.RolePrimary}, {pair.Standby, shoalpgx.RoleStandby}} {
		if open[c.node.Addr] < 1 || role[c.node.Addr] != c.role {
			t.Errorf("%s: open %v, role %q; want at least 1 and %q (all: %v, %v)", c.node.Addr, open[c.node.Addr], role[c.node.Addr], c.role, open, role)
		}
	}
}
