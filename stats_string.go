package shoal

import (
	"fmt"
	"strings"

	"github.com/shoalpool/shoal/internal/namemask"
)

// String describes the snapshot on one line, the pool's name, gauges
// first, then the counters, for logs and debugging: `pool "orders": open
// 8/10 (idle 3, in use 5), waiting 2, ...`. The budget fields appear only
// when a Budget is set. A password in the name (a URL's, or a
// keyword/value string's) is masked, as on shoaldebug's page: the line is
// meant for logs.
func (s Stats) String() string {
	var b strings.Builder
	if s.Name != "" {
		fmt.Fprintf(&b, "pool %q: ", namemask.Mask(s.Name))
	}
	fmt.Fprintf(&b, "open %d/%d (idle %d, in use %d, leases %d), waiting %d, dialing %d",
		s.TotalConns, s.MaxConns, s.IdleConns, s.InUseConns, s.Leases, s.Waiting, s.Dialing)
	if s.Closing > 0 {
		fmt.Fprintf(&b, ", closing %d", s.Closing)
	}
	if s.BudgetMembers > 0 {
		fmt.Fprintf(&b, ", budget share %d (demand %d, %d pools)", s.Share, s.Demand, s.BudgetMembers)
	}
	for _, h := range s.Hosts {
		fmt.Fprintf(&b, ", host %s %s open %d", h.Addr, h.Role, h.Open)
		if h.Lag > 0 {
			fmt.Fprintf(&b, " lag %s", h.Lag)
		}
	}
	fmt.Fprintf(&b, "; acquires %d (waited %d, %s in all, canceled %d, rejected %d, failed %d), dials %d (errors %d), closed %d, leaked %d, barge misses %d",
		s.Acquires, s.WaitedAcquires, s.WaitTime, s.CanceledAcquires, s.RejectedAcquires, s.FailedAcquires,
		s.Dials, s.DialErrors, s.Closed, s.Leaked, s.BargeMisses)
	return b.String()
}
