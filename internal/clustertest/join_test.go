//go:build unix

package clustertest

import (
	"testing"
	"time"
)

// Join and leave: three busy workers hold N/3 each; a fourth joins, busy,
// and within 2 seconds of its join the budget gives every worker a share within one of
// N/4, which each then holds, the three shrinking as their connections are
// released: no query fails and no connection in use is closed. When it
// leaves (closes its pool and its budget), the three get and hold shares
// within one of N/3 again, again within 2 seconds by share.
func TestJoinAndLeave(t *testing.T) {
	t.Parallel()
	c := newCluster(t, []string{sharedEtcd(t)}, nil)
	for range workers - 1 {
		c.add(busy)
	}
	three := c.procs
	joined(t, three...)
	settle(t, three, "the three at N/3 each", func() (bool, string) { return exactly(three, 4, 4, 4) })

	joiner := c.add(busy)
	all := c.procs
	// The 2 seconds run from the join: starting a process, before it,
	// takes what the machine gives it.
	tj := joined(t, all...)
	fair := fairIn(t, all, size/workers, "all four within one of N/4")
	fromStart := time.Since(joiner.started)
	exact := settle(t, all, "all four at N/4", func() (bool, string) { return exactly(all, 3, 3, 3, 3) })
	t.Logf("measured: joiner's first report %v after its start, all four joined %v after it; all within one of N/4 %v after that (%v after its start), exactly N/4 %v after that",
		firstReport(joiner).Round(time.Millisecond), tj.Round(time.Millisecond), fair.Round(time.Millisecond), fromStart.Round(time.Millisecond), exact.Round(time.Millisecond))
	unharmed(t, all...)

	left := time.Now()
	joiner.leave()
	leaveTook := time.Since(left)
	back := fairIn(t, three, size/(workers-1), "the three within one of N/3")
	exact = settle(t, three, "the three at N/3", func() (bool, string) { return exactly(three, 4, 4, 4) })
	t.Logf("measured: the leaver exited %v after its stdin closed; the three within one of N/3 %v after that, exactly N/3 %v later",
		leaveTook.Round(time.Millisecond), back.Round(time.Millisecond), exact.Round(time.Millisecond))
	unharmed(t, three...)
}

// firstReport returns how long after its start p wrote its first report.
func firstReport(p *proc) time.Duration {
	rs := p.since(p.started)
	if len(rs) == 0 {
		return 0
	}
	return time.UnixMilli(rs[0].At).Sub(p.started)
}
