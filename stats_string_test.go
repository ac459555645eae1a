package shoal

import (
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
