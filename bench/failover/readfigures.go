package main

import (
	"fmt"
	"time"
)

// phaseReads counts the reads of one phase of a run.
type phaseReads struct {
	answered  int
	byStandby int // answered by a server in recovery; the rest by a primary
	failed    int
}

// readFigures are what the report shows of a run's reads, in phases: before
// the fault (answered before it), after the promotion (begun once it had
// completed; in a rejoin run, and before Rejoin returned), after the rejoin
// (a rejoin run's reads begun once Rejoin had returned), and during the
// failover (the rest).
type readFigures struct {
	before, during, after, rejoined phaseReads
	// firstStandby is the time from Rejoin's start (the promotion's end) to
	// the end of the first read answered by a standby of those begun after
	// it; never when none was, or the run had no rejoin. The old primary
	// takes reads once it has started, before Rejoin returns, so a time
	// from the return would hide how soon a pool moved.
	firstStandby time.Duration
	// unexpected counts the answers the run's own account of the pair does
	// not allow: before the fault the primary's port answering as a
	// standby or the standby's as a primary, any other port at all; after
	// the promotion anything but the promoted standby as a primary, or in
	// a rejoin run the old primary as a standby (it starts as one before
	// Rejoin returns, and never as a primary).
	unexpected int
	errs       []errCount // most common first
}

// measureReads sorts a run's reads into the phases and counts who answered.
func measureReads(o *outcome) readFigures {
	f := readFigures{firstStandby: never}
	byMsg := make(map[string]int)
	rejoins := o.fault == rejoin
	for _, rs := range o.reads {
		for _, r := range rs {
			ph, ok := &f.during, true
			newPrimary := r.port == o.standby && !r.standby
			switch {
			case r.end < o.faultAt:
				ph = &f.before
				ok = r.port == o.primary && !r.standby || r.port == o.standby && r.standby
			case rejoins && r.start >= o.rejoinedAt:
				ph = &f.rejoined
				ok = newPrimary || r.port == o.primary && r.standby
			case r.start >= o.promotedAt:
				ph = &f.after
				ok = newPrimary || rejoins && r.port == o.primary && r.standby
			default:
				// The old primary may answer until it has gone (and, in a
				// rejoin, as a standby to a read still in flight when it
				// comes back), and the standby in either role while it is
				// promoted.
				ok = r.port == o.primary && !r.standby || r.port == o.standby ||
					rejoins && r.port == o.primary && r.standby
			}
			if rejoins && r.start >= o.promotedAt && r.err == nil && r.standby && r.port == o.primary &&
				(f.firstStandby == never || r.end-o.promotedAt < f.firstStandby) {
				f.firstStandby = r.end - o.promotedAt
			}
			if r.err != nil {
				ph.failed++
				byMsg[oneLine(r.err)]++
				continue
			}
			ph.answered++
			if r.standby {
				ph.byStandby++
			}
			if !ok {
				f.unexpected++
			}
		}
	}
	f.errs = sortedErrs(byMsg)
	return f
}

// share is n as a percentage of all, or n/a when there is nothing to share.
func share(n, all int) string {
	if all == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.1f%%", 100*float64(n)/float64(all))
}
