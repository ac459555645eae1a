package main

import (
	"fmt"
	"time"
)

// roundLine is the line printed as each round of a cell ends: its q/s and
// client costs, then its real length and its slowest window's q/s, which
// tell a round whose work stopped for a while (a slowest window near zero)
// from one held up by a call that stuck (a length far past the nominal).
func roundLine(query, contender string, workers, round int, m measured) string {
	slowest := "       –"
	if m.slowest >= 0 {
		slowest = fmt.Sprintf("%8.0f", m.slowest)
	}
	return fmt.Sprintf("%-9s %-13s %3d workers round %d: %8.0f q/s  %6.1f µs client CPU/query (%4.1f user)  %5.2f thread sleeps/query  %5.2f reads %5.2f writes/query  %3.0f%% machine idle  %6.2f s wall, slowest %s %s q/s",
		query, contender, workers, round, m.qps, float64(m.cpuQuery)/1e3, float64(m.userQuery)/1e3, m.csQuery, m.reads, m.writes, 100*m.idle,
		m.wall.Seconds(), paceWindow.Round(time.Millisecond), slowest)
}
