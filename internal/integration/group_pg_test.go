package integration_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgcount"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// Fifty tenants under a cap of 20 connections against the real
// PostgreSQL, through a shoal.Group of core pools of pgx connections: each
// tenant's pool logs in as a role of its own (scripts/services.sh makes
// them), whose search_path is a schema it owns and no other tenant may
// use; every query reads its own tenant's table as its own role, another
// tenant's table is refused, each tenant's backends carry an
// application_name of its own, and pg_stat_activity, polled every 20ms
// throughout, never shows more than 20 of them. A skewed load is served; a
// bursting tenant takes most of the budget while a tenant with a minimum
// keeps it; idle tenants' pools close and their backends go.
func TestGroupOfTenantsUnderOneCap(t *testing.T) {
	const tenants, capTotal = 50, 20
	connString := pgtest.ConnString(t)
	ctx := testContext(t, 2*time.Minute)
	// Unique per run, so that no other test's backends are counted and no
	// other run's tables are touched.
	run := time.Now().UnixNano() % 1_000_000
	prefix := fmt.Sprintf("shoal-tenants-%06d-", run)
	table := fmt.Sprintf("run_%06d", run)
	name := func(i int) string { return fmt.Sprintf("t%02d", i) }
	roles := make(map[string]*pgx.ConnConfig, tenants)
	for i := range tenants {
		pc, err := pgx.ParseConfig(pgtest.TenantConnString(t, i))
		if err != nil {
			t.Fatalf("tenant %d's connection string: %v", i, err)
		}
		roles[name(i)] = pc
	}
	tenantTables(t, ctx, roles, table)
	checker, err := pgcount.Start(ctx, pgcount.Config{
		ConnString: connString,
		Query:      "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE $1",
		Arg:        prefix + "%",
		Limit:      capTotal,
	})
	if err != nil {
		t.Fatal(err)
	}
	admin := pgtest.AdminConn(t)
	countNow := func() int {
		var n int
		if err := admin.QueryRow(ctx, "SELECT count(*) FROM pg_stat_activity WHERE application_name LIKE $1", prefix+"%").Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}

	budget, err := shoal.NewBudget(capTotal, shoal.BudgetName("tenants"), shoal.BudgetIdleTime(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	const vip = "t49" // the tenant with a minimum of its own
	group, err := shoal.NewGroup(shoal.GroupConfig[string, *pgx.Conn]{
		Name:   "tenants",
		Budget: budget,
		Config: func(tenant string) (shoal.Config[*pgx.Conn], error) {
			role, ok := roles[tenant]
			if !ok {
				return shoal.Config[*pgx.Conn]{}, fmt.Errorf("no tenant %q", tenant)
			}
			pc := role.Copy()
			pc.RuntimeParams["application_name"] = prefix + tenant
			minConns := 0
			if tenant == vip {
				minConns = 2
			}
			return shoal.Config[*pgx.Conn]{
				Name:     tenant,
				MaxConns: 16,
				MinConns: minConns,
				Dial:     func(ctx context.Context) (*pgx.Conn, error) { return pgx.ConnectConfig(ctx, pc) },
				Close:    func(c *pgx.Conn) error { return c.Close(context.Background()) },
			}, nil
		},
		IdleTimeout: time.Second,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer group.Close(context.Background())
	// The table unqualified: the role's search_path finds its own.
	own := "SELECT name, current_user FROM " + pgx.Identifier{table}.Sanitize() + ", pg_sleep(0.002)"
	query := func(ctx context.Context, tenant string) error {
		return group.Do(ctx, tenant, func(c *pgx.Conn) error {
			var got, user string
			if err := c.QueryRow(ctx, own).Scan(&got, &user); err != nil {
				return err
			}
			if got != tenant || user != roles[tenant].User {
				return fmt.Errorf("tenant %s's query read tenant %q's table as role %q", tenant, got, user)
			}
			return nil
		})
	}

	// A skewed load over all fifty: tenant i drawn with weight 1/(i+1).
	weights := make([]float64, tenants)
	total := 0.0
	for i := range weights {
		weights[i] = 1 / float64(i+1)
		total += weights[i]
	}
	pick := func(r *rand.Rand) string {
		x := r.Float64() * total
		for i, w := range weights {
			if x < w {
				return name(i)
			}
			x -= w
		}
		return name(tenants - 1)
	}
	var served atomic.Int32
	var wg sync.WaitGroup
	for w := range 40 {
		wg.Go(func() {
			r := rand.New(rand.NewPCG(uint64(w), 7))
			for range 30 {
				if err := query(ctx, pick(r)); err != nil {
					t.Errorf("query: %v", err)
					return
				}
				served.Add(1)
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	t.Logf("skewed load: %d queries served by %d pools; the most backends at once: %d", served.Load(), group.Len(), checker.Max())

	// Roles keep tenants apart: a tenant's connection may not read another
	// tenant's table, named with its schema.
	for _, pair := range [][2]string{{"t00", vip}, {vip, "t00"}} {
		reader, owner := pair[0], pair[1]
		other := "SELECT name FROM " + pgx.Identifier{roles[owner].User, table}.Sanitize()
		err := group.Do(ctx, reader, func(c *pgx.Conn) error {
			var got string
			return c.QueryRow(ctx, other).Scan(&got)
		})
		var pe *pgconn.PgError
		if !errors.As(err, &pe) || pe.Code != "42501" {
			t.Fatalf("tenant %s reading tenant %s's table: want SQLSTATE 42501 (insufficient_privilege), got %v", reader, owner, err)
		}
	}

	// A burst of one tenant: it takes most of the budget, and the tenant
	// with a minimum is still served on it.
	burst, stopBurst := context.WithCancel(ctx)
	var burstWG sync.WaitGroup
	for range 30 {
		burstWG.Go(func() {
			for burst.Err() == nil {
				_ = query(burst, "t00")
			}
		})
	}
	if err := query(ctx, vip); err != nil {
		t.Fatal(err)
	}
	if !waitFor(10*time.Second, func() bool {
		for _, m := range budget.Stats().Members {
			if m.Name == "t00" && m.Share >= capTotal-4 {
				return true
			}
		}
		return false
	}) {
		t.Fatalf("the bursting tenant's share did not grow: %+v", budget.Stats())
	}
	for range 20 {
		short, cancel := context.WithTimeout(ctx, 5*time.Second)
		err := query(short, vip)
		cancel()
		if err != nil {
			t.Fatalf("the tenant with a minimum during the burst: %v (%+v)", err, budget.Stats())
		}
	}
	if st := group.Stats()[vip]; st.TotalConns < 2 {
		t.Fatalf("the tenant with a minimum of 2 holds %d connections during the burst", st.TotalConns)
	}
	stopBurst()
	burstWG.Wait()

	// Idle: every pool closes, and its backends go.
	if !waitFor(20*time.Second, func() bool { return group.Len() == 0 && countNow() == 0 }) {
		t.Fatalf("idle pools still open: %d pools, %d backends", group.Len(), countNow())
	}
	rep := checker.Stop()
	if len(rep.Over) > 0 || rep.Max > capTotal {
		t.Fatalf("pg_stat_activity showed %d backends at most, above the cap of %d in %d samples: %v", rep.Max, capTotal, len(rep.Over), rep.Over)
	}
	if rep.Errors > 0 {
		t.Logf("%d samples failed, the last: %v", rep.Errors, rep.LastErr)
	}
	t.Logf("the most backends at once: %d of %d, in %d samples", rep.Max, capTotal, len(rep.Samples))
}

// tenantTables makes, as each tenant's role, a table of one row (the
// tenant's name) in its own schema, and drops them at cleanup: the schemas
// and roles stay (scripts/services.sh's), the tables are this run's.
func tenantTables(t *testing.T, ctx context.Context, roles map[string]*pgx.ConnConfig, table string) {
	t.Helper()
	id := pgx.Identifier{table}.Sanitize()
	as := func(ctx context.Context, tenant string, do func(*pgx.Conn) error) error {
		pc := roles[tenant].Copy()
		pc.RuntimeParams["application_name"] = "shoal-tenants-setup"
		c, err := pgx.ConnectConfig(ctx, pc)
		if err != nil {
			return fmt.Errorf("tenant %s logging in as %s: %w", tenant, pc.User, err)
		}
		defer c.Close(context.Background())
		return do(c)
	}
	for tenant := range roles {
		err := as(ctx, tenant, func(c *pgx.Conn) error {
			if _, err := c.Exec(ctx, "CREATE TABLE "+id+" (name text)"); err != nil {
				return err
			}
			_, err := c.Exec(ctx, "INSERT INTO "+id+" VALUES ($1)", tenant)
			return err
		})
		if err != nil {
			t.Fatalf("tenant %s's table: %v", tenant, err)
		}
		t.Cleanup(func() {
			ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
			defer cancel()
			err := as(ctx, tenant, func(c *pgx.Conn) error {
				_, err := c.Exec(ctx, "DROP TABLE IF EXISTS "+id)
				return err
			})
			if err != nil {
				t.Errorf("dropping tenant %s's table: %v", tenant, err)
			}
		})
	}
}
