package metricstest

import "testing"

// Run runs the tests both packages share on b, each as a subtest: what is
// registered, attached and read is the same in both, only the reading
// differs (Set.Read).
func Run(t *testing.T, b Backend) {
	for _, test := range []struct {
		name string
		run  func(*testing.T, Backend)
	}{
		{"PoolNames", testPoolNames},
		{"PoolsOwnName", testPoolsOwnName},
		{"PasswordInName", testPasswordInName},
		{"ReadsStatsOnlyWhenRead", testReadsStatsOnlyWhenRead},
		{"SharedName", testSharedName},
		{"Budget", testBudget},
		{"Multiplexed", testMultiplexed},
		{"Extras", testExtras},
		{"BargeMisses", testBargeMisses},
		{"HostValues", testHostValues},
		{"HostRoleChange", testHostRoleChange},
		{"HostsDetach", testHostsDetach},
		{"HostsDetachBeforeNamed", testHostsDetachBeforeNamed},
		{"HostsSameAddr", testHostsSameAddr},
		{"HostsConcurrent", testHostsConcurrent},
		{"ObserverAllocatesNothing", testObserverAllocatesNothing},
		{"PoolWithObserverAllocatesNothing", testPoolWithObserverAllocatesNothing},
	} {
		t.Run(test.name, func(t *testing.T) { test.run(t, b) })
	}
}
