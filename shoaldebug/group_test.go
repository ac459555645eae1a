package shoaldebug_test

import (
	"context"
	"encoding/json"
	"net/http/httptest"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoaldebug"
)

// A shoal.Group on the page, as docs/budgets.md shows it: its budget
// registered, a line per pool the group has open (a member), each pool
// also listed with an Observer of the page's; a pool closed for idleness
// leaves both, and the key's next pool comes back on them.
func TestGroupListed(t *testing.T) {
	reg := shoaldebug.NewRegistry()
	budget, err := shoal.NewBudget(6, shoal.BudgetName("tenants"))
	if err != nil {
		t.Fatal(err)
	}
	defer reg.RegisterBudget("tenants", budget.Stats)()
	g, err := shoal.NewGroup(shoal.GroupConfig[string, int]{
		Name:   "tenants",
		Budget: budget,
		Config: func(tenant string) (shoal.Config[int], error) {
			return shoal.Config[int]{
				Name:     tenant,
				MaxConns: 3,
				Observer: reg.NewObserver(tenant),
				Dial:     func(context.Context) (int, error) { return 1, nil },
			}, nil
		},
		IdleTimeout: 100 * time.Millisecond,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer g.Close(context.Background())
	srv := httptest.NewServer(reg.Handler())
	defer srv.Close()
	page := func() (members, pools []string) {
		t.Helper()
		_, js := get(t, srv, "?format=json", "")
		var p shoaldebug.Page
		if err := json.Unmarshal([]byte(js), &p); err != nil {
			t.Fatal(err)
		}
		if len(p.Budgets) != 1 || p.Budgets[0].Name != "tenants" {
			t.Fatalf("budgets on the page: %+v", p.Budgets)
		}
		for _, m := range p.Budgets[0].Stats.Members {
			members = append(members, m.Name)
		}
		for _, pv := range p.Pools {
			pools = append(pools, pv.Name)
		}
		slices.Sort(members)
		slices.Sort(pools)
		return members, pools
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	use := func(tenant string) {
		t.Helper()
		if err := g.Do(ctx, tenant, func(int) error { return nil }); err != nil {
			t.Fatalf("%s: %v", tenant, err)
		}
	}

	use("acme")
	use("globex")
	members, pools := page()
	if want := []string{"acme", "globex"}; !slices.Equal(members, want) || !slices.Equal(pools, want) {
		t.Fatalf("the group's two pools: budget members %v, pools %v, want %v in both", members, pools, want)
	}
	_, html := get(t, srv, "", "")
	for _, want := range []string{`data-budget="tenants"`, `data-member="acme"`, `data-member="globex"`} {
		if !strings.Contains(html, want) {
			t.Errorf("page lacks %q", want)
		}
	}

	deadline := time.Now().Add(10 * time.Second)
	for {
		members, pools = page()
		if len(members) == 0 && len(pools) == 0 && g.Len() == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("long after IdleTimeout: %d pools open, budget members %v, pools on the page %v", g.Len(), members, pools)
		}
		time.Sleep(20 * time.Millisecond)
	}

	use("acme")
	if members, pools = page(); !slices.Equal(members, []string{"acme"}) || !slices.Equal(pools, []string{"acme"}) {
		t.Fatalf("acme's next pool: budget members %v, pools %v, want [acme] in both", members, pools)
	}
}
