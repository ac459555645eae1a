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
