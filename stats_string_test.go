package shoal

import (
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestStatsString(t *testing.T) {
	s := Stats{MaxConns: 10, Share: 10, TotalConns: 8, IdleConns: 3, InUseConns: 5, Leases: 5, Waiting: 2,
		Acquires: 100, WaitedAcquires: 7, WaitTime: 3 * time.Millisecond, Dials: 9, DialErrors: 1}
	got := s.String()
	for _, want := range []string{"open 8/10 (idle 3, in use 5, leases 5), waiting 2", "waited 7, 3ms in all", "dials 9 (errors 1)"} {
		if !strings.Contains(got, want) {
			t.Errorf("String() = %s\nwant it to contain %s", got, want)
		}
	}
	if strings.Contains(got, "budget") {
		t.Errorf("String() shows a budget without one: %s", got)
	}
	s.BudgetMembers, s.Share, s.Demand = 3, 4, 6
	if got := s.String(); !strings.Contains(got, "budget share 4 (demand 6, 3 pools)") {
		t.Errorf("String() = %s, want the budget", got)
	}
	if strings.Contains(got, "host") {
		t.Errorf("String() shows hosts without any: %s", got)
	}
	s.Hosts = []HostStat{{Addr: "db1:5432", Role: "primary", Open: 3}, {Addr: "db2:5432", Role: "standby", Open: 2, Lag: 1500 * time.Millisecond}}
	if got := s.String(); !strings.Contains(got, "host db1:5432 primary open 3, host db2:5432 standby open 2 lag 1.5s;") {
		t.Errorf("String() = %s, want the hosts", got)
	}
}

// A password in the pool's name is masked in String, as on the live page:
// the line goes to logs; and the rest of the name is left as it is.
func TestStatsStringMasksAPasswordInTheName(t *testing.T) {
	for name, want := range map[string]string{
		"postgres://app:hunter2@db/orders": `pool "postgres://app:xxxxx@db/orders": `,
		"orders host=db password=hunter2":  `pool "orders host=db password=xxxxx": `,
		"orders,password=hunter2":          `pool "orders,password=xxxxx": `,
		"orders db:5432/app":               `pool "orders db:5432/app": `,
	} {
		got := Stats{Name: name}.String()
		if strings.Contains(got, "hunter2") || !strings.HasPrefix(got, want) {
			t.Errorf("String() of a pool named %q = %s, want it to start %s", name, got, want)
		}
	}
}

// docs/operating.md offers Stats.String for a log line: the snapshot on
// one line. Every count and counter of Stats is in it, each with its own
// value here so that one shown in another's place fails; MinIdle and
// MinConns are the pool's floors, not counts, and are left out.
func TestStatsStringShowsEveryCountOnOneLine(t *testing.T) {
	var s Stats
	v := reflect.ValueOf(&s).Elem()
	want := map[string]string{}
	for i := range v.NumField() {
		f, name := v.Field(i), v.Type().Field(i).Name
		if name == "MinIdle" || name == "MinConns" {
			continue
		}
		n := int64(101 + i)
		switch f.Kind() {
		case reflect.Int, reflect.Int64:
			if f.Type() == reflect.TypeFor[time.Duration]() {
				f.SetInt(n * int64(time.Millisecond))
				want[name] = time.Duration(n * int64(time.Millisecond)).String()
			} else {
				f.SetInt(n)
				want[name] = strconv.FormatInt(n, 10)
			}
		}
	}
	s.Name = "orders\nsecond line"
	got := s.String()
	if strings.Contains(got, "\n") {
		t.Errorf("String() is more than one line: %s", got)
	}
	for name, w := range want {
		if !regexp.MustCompile(`\b` + regexp.QuoteMeta(w) + `\b`).MatchString(got) {
			t.Errorf("String() does not show %s (%s): %s", name, w, got)
		}
	}
}

// A pool's name is masked as the pool settles it and again in String: a
// quoted password with text right after it ("(password='a b')") keeps
// that text through both, so that the line shows the name the pool has.
func TestStatsStringOfAMaskedName(t *testing.T) {
	p, _ := newTestPool(t, Config[*fakeConn]{Name: "orders (password='hunter 2')/reads", MaxConns: 1})
	const want = `pool "orders (password='xxxxx')/reads": `
	if got := p.Stats().String(); !strings.HasPrefix(got, want) {
		t.Errorf("String() = %s, want it to start %s", got, want)
	}
}
