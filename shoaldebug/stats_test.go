package shoaldebug

import (
	"context"
	"encoding/json"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
)

// Every field of shoal.Stats (and shoal.HostStat) is on the page's JSON:
// one added there and not here fails.
func TestStatsMirrorsShoalStats(t *testing.T) {
	for _, pair := range [][2]reflect.Type{
		{reflect.TypeFor[shoal.Stats](), reflect.TypeFor[Stats]()},
		{reflect.TypeFor[shoal.HostStat](), reflect.TypeFor[Host]()},
	} {
		for f := range pair[0].Fields() {
			if !f.IsExported() {
				continue // read through a method (Stats.ClosedFor), not a field
			}
			if _, ok := pair[1].FieldByName(f.Name); !ok {
				t.Errorf("%s.%s is not in shoaldebug's %s", pair[0], f.Name, pair[1])
			}
		}
	}
	// And statsOf copies every one: a value with each field set comes back
	// with each field set.
	var in shoal.Stats
	fill(reflect.ValueOf(&in).Elem())
	in.Hosts = []shoal.HostStat{{}}
	fill(reflect.ValueOf(&in.Hosts[0]).Elem())
	out := statsOf(in)
	ov := reflect.ValueOf(out)
	for f := range reflect.TypeFor[Stats]().Fields() {
		if ov.FieldByName(f.Name).IsZero() {
			t.Errorf("statsOf leaves %s unset", f.Name)
		}
	}
	if h := reflect.ValueOf(out.Hosts[0]); h.FieldByName("Lag").IsZero() || h.FieldByName("LastError").IsZero() || h.FieldByName("LastCheck").IsZero() {
		t.Errorf("statsOf's host %+v lost a field", out.Hosts[0])
	}
}

// Every field of shoal.BudgetStats (and shoal.BudgetMemberStats) is on the
// page's JSON, and budgetStatsOf copies each.
func TestBudgetStatsMirrorShoals(t *testing.T) {
	for _, pair := range [][2]reflect.Type{
		{reflect.TypeFor[shoal.BudgetStats](), reflect.TypeFor[BudgetStats]()},
		{reflect.TypeFor[shoal.BudgetMemberStats](), reflect.TypeFor[BudgetMemberStats]()},
	} {
		for f := range pair[0].Fields() {
			if !f.IsExported() {
				continue // read through a method (Stats.ClosedFor), not a field
			}
			if _, ok := pair[1].FieldByName(f.Name); !ok {
				t.Errorf("%s.%s is not in shoaldebug's %s", pair[0], f.Name, pair[1])
			}
		}
	}
	var in shoal.BudgetStats
	in.Name, in.Size, in.InUse = "x", 7, 7
	in.Members = []shoal.BudgetMemberStats{{}}
	fill(reflect.ValueOf(&in.Members[0]).Elem())
	out := budgetStatsOf(in)
	if out.Name == "" || out.Size == 0 || out.InUse == 0 || len(out.Members) != 1 {
		t.Fatalf("budgetStatsOf lost a field: %+v", out)
	}
	mv := reflect.ValueOf(out.Members[0])
	for f := range reflect.TypeFor[BudgetMemberStats]().Fields() {
		if mv.FieldByName(f.Name).IsZero() {
			t.Errorf("budgetStatsOf leaves the member's %s unset", f.Name)
		}
	}
}

// fill sets every field of v to a non-zero value.
func fill(v reflect.Value) {
	for i := range v.NumField() {
		f := v.Field(i)
		switch f.Kind() {
		case reflect.Int, reflect.Int64:
			f.SetInt(7)
		case reflect.String:
			f.SetString("x")
		case reflect.Struct: // time.Time
			f.Set(reflect.ValueOf(time.Unix(1, 0)))
		}
	}
}

// The JSON's keys are snake_case, and every duration's key names its unit.
func TestJSONKeysSnakeCaseWithUnits(t *testing.T) {
	reg := NewRegistry()
	p, err := shoal.New(shoal.Config[int]{Name: "orders", MaxConns: 2, LeakThreshold: time.Millisecond,
		Observer: reg.NewObserver(""),
		Dial:     func(context.Context) (int, error) { return 1, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	l, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release()
	b, err := shoal.NewBudget(4, shoal.BudgetName("tenants"))
	if err != nil {
		t.Fatal(err)
	}
	q, err := shoal.New(shoal.Config[int]{Name: "acme", MaxConns: 2, Budget: b,
		Dial: func(context.Context) (int, error) { return 1, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close(context.Background())
	defer reg.RegisterBudget("tenants", b.Stats)()
	page := reg.Snapshot()
	page.Pools[0].Stats.Hosts = []Host{{Addr: "db:5432", Lag: time.Second}}
	page.Pools[0].Leaks = []Leak{{Held: time.Second}}
	if len(page.Budgets) != 1 || len(page.Budgets[0].Stats.Members) != 1 {
		t.Fatalf("want one budget with one member on the page: %+v", page.Budgets)
	}
	body, err := json.Marshal(page)
	if err != nil {
		t.Fatal(err)
	}
	var tree any
	if err := json.Unmarshal(body, &tree); err != nil {
		t.Fatal(err)
	}
	snake := regexp.MustCompile(`^[a-z]+(_[a-z]+)*$`)
	durations := map[string]bool{"wait_time_ns": true, "lag_ns": true, "held_ns": true, "up_to_ns": true}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch v := v.(type) {
		case map[string]any:
			for k, child := range v {
				if !snake.MatchString(k) {
					t.Errorf("key %s.%s is not snake_case", path, k)
				}
				if strings.HasSuffix(k, "_ns") && !durations[k] {
					t.Errorf("key %s.%s: a duration this test does not know", path, k)
				}
				walk(path+"."+k, child)
			}
		case []any:
			for _, child := range v {
				walk(path+"[]", child)
			}
		}
	}
	walk("page", tree)
	for k := range durations {
		if !strings.Contains(string(body), `"`+k+`"`) {
			t.Errorf("no %q in %s", k, body)
		}
	}
	for _, bad := range []string{`"WaitTime"`, `"MaxConns"`, `"Lag"`, `"InUse"`, `"Members"`} {
		if strings.Contains(string(body), bad) {
			t.Errorf("the JSON has a Go field name, %s: %s", bad, body)
		}
	}
}

// A pool registered without a name is listed under its own, and one whose
// own name holds a password has it masked.
func TestUnnamedRegistrationUsesThePoolsName(t *testing.T) {
	reg := NewRegistry()
	p, err := shoal.New(shoal.Config[int]{Name: "orders", MaxConns: 1, Observer: reg.NewObserver(""),
		Dial: func(context.Context) (int, error) { return 1, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	q, err := shoal.New(shoal.Config[int]{Name: "postgres://app:s3cret@db/app", MaxConns: 1,
		Dial: func(context.Context) (int, error) { return 1, nil }})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close(context.Background())
	defer reg.Register("", q.Stats)()
	page := reg.Snapshot()
	if len(page.Pools) != 2 || page.Pools[0].Name != "orders" || page.Pools[0].Stats.Name != "orders" {
		t.Fatalf("pools %+v; want the first named orders", page.Pools)
	}
	if n := page.Pools[1].Name; strings.Contains(n, "s3cret") || !strings.Contains(n, "db/app") || strings.Contains(page.Pools[1].Stats.Name, "s3cret") {
		t.Errorf("second pool listed as %q (stats %q); want its name with the password masked", n, page.Pools[1].Stats.Name)
	}
}
