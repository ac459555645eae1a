package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgcount"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// tenantSchemas makes a schema per tenant, each with a table naming its
// tenant, dropped at cleanup, and returns the schemas' names. A schema per
// tenant (reached through search_path) stands in for a database or a role
// per tenant, which the test role may not create; to the group it is the
// same: a Config per key.
func tenantSchemas(t *testing.T, prefix string, n int) []string {
	t.Helper()
	admin := pgtest.AdminConn(t)
	ctx := pgtest.Ctx(t)
	schemas := make([]string, n)
	for i := range schemas {
		s := fmt.Sprintf("%s_%d", prefix, i)
		schemas[i] = s
		id := pgx.Identifier{s}.Sanitize()
		if _, err := admin.Exec(ctx, "CREATE SCHEMA "+id+"; CREATE TABLE "+id+".tenant (name text); INSERT INTO "+id+".tenant VALUES ('"+s+"')"); err != nil {
			t.Fatal(err)
		}
	}
	t.Cleanup(func() {
		for _, s := range schemas {
			if _, err := admin.Exec(context.Background(), "DROP SCHEMA IF EXISTS "+pgx.Identifier{s}.Sanitize()+" CASCADE"); err != nil {
				t.Errorf("dropping schema %s: %v", s, err)
			}
		}
	})
	return schemas
}

// A group of shoalpgx pools, a pool per tenant made on first use: each
// tenant's queries reach its own schema, the pools share one budget and
// the server never holds more of their backends than its size, the pools
// are named after the group and never after their key, and idle pools
// close, their backends with them.
func TestGroupOfTenantPools(t *testing.T) {
	connString := pgtest.ConnString(t)
	ctx := pgtest.Ctx(t)
	const tenants, capTotal = 6, 3
	prefix := fmt.Sprintf("shoalpgx_group_%d", time.Now().UnixNano()%1_000_000)
	schemas := tenantSchemas(t, prefix, tenants)
	app := strings.ReplaceAll(prefix, "_", "-") + "-"
	checker, err := pgcount.Start(ctx, pgcount.Config{
		ConnString: connString,
		Query:      "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE $1",
		Arg:        app + "%",
		Limit:      capTotal,
	})
	if err != nil {
		t.Fatal(err)
	}
	budget, err := shoal.NewBudget(capTotal, shoal.BudgetName("tenants"), shoal.BudgetIdleTime(200*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	g, err := NewGroup(GroupConfig{
		Name:   "tenants",
		Budget: budget,
		Config: func(schema string) (*Config, error) {
			cfg, err := ParseConfig(connString)
			if err != nil {
				return nil, err
			}
			cfg.MaxConns = 4
			cfg.ConnConfig.RuntimeParams["search_path"] = schema
			cfg.ConnConfig.RuntimeParams["application_name"] = app + schema
			return cfg, nil
		},
		IdleTimeout: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(ctx)

	var wg sync.WaitGroup
	for w := range 12 {
		wg.Go(func() {
			for i := range 15 {
				s := schemas[(w+i)%tenants]
				var name string
				if err := g.QueryRow(ctx, s, "SELECT name FROM tenant, pg_sleep(0.002)").Scan(&name); err != nil {
					t.Errorf("tenant %s: %v", s, err)
					return
				}
				if name != s {
					t.Errorf("tenant %s's query read %q: another tenant's schema", s, name)
					return
				}
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	// Every tenant once more, so that none has gone idle long enough to
	// close before the pools are counted.
	for _, s := range schemas {
		if _, err := g.Exec(ctx, s, "SELECT 1"); err != nil {
			t.Fatalf("tenant %s: %v", s, err)
		}
	}
	if n := g.Len(); n != tenants {
		t.Fatalf("%d pools open after every tenant was used, want %d", n, tenants)
	}
	for key, st := range g.Stat() {
		name := st.Shoal().Name
		if !strings.HasPrefix(name, "tenants[") || strings.Contains(name, key) {
			t.Fatalf("tenant %s's pool is named %q: want tenants[N], never the key", key, name)
		}
		if st.Shoal().BudgetMembers != tenants {
			t.Fatalf("tenant %s's pool sees %d budget members, want %d", key, st.Shoal().BudgetMembers, tenants)
		}
	}

	// Idle: every pool closes and its backends go.
	admin := pgtest.AdminConn(t)
	pgtest.WaitFor(t, 10*time.Second, "idle pools closed and their backends gone", func() bool {
		var n int
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE $1", app+"%").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return g.Len() == 0 && n == 0
	})
	// A pool leaves the budget once its last connection's Close has
	// returned, which waits for the server to hang up: a moment after
	// pg_stat_activity has dropped the backend.
	pgtest.WaitFor(t, 10*time.Second, "the closed pools' permits back and the pools gone from the budget", func() bool {
		bs := budget.Stats()
		return bs.InUse == 0 && len(bs.Members) == 0
	})
	rep := checker.Stop()
	if len(rep.Over) > 0 || rep.Max > capTotal {
		t.Fatalf("pg_stat_activity showed %d backends at most, above the cap of %d in %d samples: %v", rep.Max, capTotal, len(rep.Over), rep.Over)
	}
	t.Logf("the most backends at once: %d of %d, in %d samples", rep.Max, capTotal, len(rep.Samples))

	// A key used again after its pool closed gets a new pool.
	var name string
	if err := g.QueryRow(ctx, schemas[0], "SELECT name FROM tenant").Scan(&name); err != nil || name != schemas[0] {
		t.Fatalf("tenant %s after its pool closed: %q, %v", schemas[0], name, err)
	}
}

// MaxPools: a new key closes the pool used least recently that is idle,
// and fails with shoal.ErrExhausted while every pool is busy; a Config
// error reaches the caller, and the next use of the key asks again.
func TestGroupMaxPoolsAndConfigErrors(t *testing.T) {
	connString := pgtest.ConnString(t)
	ctx := pgtest.Ctx(t)
	fail := true
	var mu sync.Mutex
	g, err := NewGroup(GroupConfig{
		MaxPools:    2,
		IdleTimeout: -1,
		Config: func(key string) (*Config, error) {
			mu.Lock()
			defer mu.Unlock()
			if key == "flaky" && fail {
				fail = false
				return nil, errors.New("no such tenant yet")
			}
			cfg, err := ParseConfig(connString)
			if err != nil {
				return nil, err
			}
			cfg.ConnConfig.RuntimeParams["application_name"] = pgtest.AppName(t)
			return cfg, nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(ctx)
	if _, err := g.Exec(ctx, "flaky", "SELECT 1"); err == nil || !strings.Contains(err.Error(), "no such tenant yet") || !strings.Contains(err.Error(), `group "group"`) {
		t.Fatalf("a Config error: %v", err)
	}
	if _, err := g.Exec(ctx, "flaky", "SELECT 1"); err != nil {
		t.Fatalf("the key after its Config failed once: %v", err)
	}
	a, err := g.Acquire(ctx, "a")
	if err != nil {
		t.Fatal(err)
	}
	// "flaky" is idle and used least recently: "b" closes its pool.
	if _, err := g.Exec(ctx, "b", "SELECT 1"); err != nil {
		t.Fatal(err)
	}
	if _, ok := g.Stat()["flaky"]; ok || g.Len() != 2 {
		t.Fatalf("pools after a third key: %v, want flaky's closed", keysOf(g.Stat()))
	}
	b, err := g.Acquire(ctx, "b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := g.Exec(ctx, "c", "SELECT 1"); !errors.Is(err, shoal.ErrExhausted) {
		t.Fatalf("a third key while both pools are busy: %v, want shoal.ErrExhausted", err)
	}
	a.Release()
	b.Release()
	if _, err := g.Exec(ctx, "c", "SELECT 1"); err != nil {
		t.Fatalf("a third key once a pool is idle: %v", err)
	}
	if err := g.Close(ctx); err != nil {
		t.Fatalf("Close with every connection released: %v", err)
	}
	if _, err := g.Exec(ctx, "c", "SELECT 1"); !errors.Is(err, shoal.ErrClosed) {
		t.Fatalf("after Close: %v, want shoal.ErrClosed", err)
	}
}

func TestNewGroupRefusesBadConfig(t *testing.T) {
	if _, err := NewGroup(GroupConfig{}); err == nil || !strings.Contains(err.Error(), "GroupConfig.Config") {
		t.Fatalf("no Config: %v", err)
	}
	cfg := func(string) (*Config, error) { return nil, nil }
	// A negative MaxPools is no bound, as in the core's Group.
	g, err := NewGroup(GroupConfig{Config: cfg, MaxPools: -1})
	if err != nil {
		t.Fatalf("negative MaxPools: %v", err)
	}
	_ = g.Close(context.Background())
}

func keysOf(m map[string]*Stat) []string {
	var ks []string
	for k := range m {
		ks = append(ks, k)
	}
	return ks
}
