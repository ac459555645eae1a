package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/shoalpool/shoal/bench/internal/mdtable"
)

// result is one run, measured and checked.
type result struct {
	o  *outcome
	f  figures
	ch check
}

func ms(d time.Duration) string {
	if d == never {
		return "not in the run"
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}

func markdown(cmd, machine string, s spec, rs []result) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Failover: a PostgreSQL primary fails, its synchronous standby is promoted\n\n")
	fmt.Fprintf(&b, "Machine: %s.\nCommand (from bench/, as root, after `. ../scripts/test-env.sh`): `%s`\n\n", machine, cmd)
	fmt.Fprintf(&b, "%d workers, each writing its own sequence numbers with one INSERT at a time through the pool's Exec, "+
		"each with a %v deadline, for %v; at second %v the primary (127.0.0.1:5441) fails and the standby (127.0.0.1:5442) is promoted "+
		"(pg_ctl promote, waited for). silent: the pools reach the primary through a proxy that from then on accepts and neither forwards nor closes; "+
		"stopped: the primary shuts down (pg_ctl -m fast). Both pools with their defaults on the same connection string, "+
		"`postgres://shoal:...@<primary>,127.0.0.1:5442/shoal_test?sslmode=disable&target_session_attrs=read-write`. "+
		"First ack and full throughput are timed from the start of the promotion, which began once the primary had gone (silenced, or stopped: the stop took the time shown); "+
		"both count only the writes begun after that, which the old primary cannot have answered; the promotion took the time shown (pg_ctl promote and a poll every 100ms until the server says it left recovery). Full throughput: the end of the first %v window with at least %.0f%% of the write rate from second %v to the fault. "+
		"Lost: acknowledged, not in the table on the new primary; duplicated: a (worker, seq) there twice; both must be 0. "+
		"Failed yet committed: the caller was told the write failed and it is in the table: its deadline passed with the outcome unknown "+
		"(silent), or PostgreSQL's fast shutdown ended a session waiting for its standby's ack after committing locally (stopped); the pools pass on what they were told. "+
		"The new primary writes without a synchronous standby, so its rate can exceed the one before the fault.\n\n",
		s.workers, s.deadline, s.duration, s.faultAt.Seconds(), fullWindow, 100*fullShare, warmup.Seconds())
	mdtable.Header(&b, "case", "pool", "acked", "failed", "failed yet committed", "lost", "duplicated",
		"first ack", "full throughput", "writes/s before", "writes/s last 2s", "stop took", "promotion took", "Close after the run")
	for _, r := range rs {
		closeStr := ms(r.o.closeTook)
		if r.o.closeStuck {
			closeStr = fmt.Sprintf("> %v", closeWait)
		}
		fmt.Fprintf(&b, "| %s | %s | %d | %d | %d | %d | %d | %s | %s | %.0f | %.0f | %s | %s | %s |\n",
			r.o.fault, r.o.contender, r.f.acked, r.f.failed, r.ch.failedCommitted, r.ch.lost, r.ch.duplicated,
			ms(r.f.firstAck), ms(r.f.full), r.f.rateBefore, r.f.rateAt, ms(r.f.stop), ms(r.f.promotion), closeStr)
	}
	b.WriteString("\nThe most common errors of each run:\n\n")
	for _, r := range rs {
		if len(r.f.errs) == 0 {
			fmt.Fprintf(&b, "- %s, %s: none\n", r.o.fault, r.o.contender)
			continue
		}
		fmt.Fprintf(&b, "- %s, %s (%d before the fault):", r.o.fault, r.o.contender, r.f.failedBeforeFault)
		for i, e := range r.f.errs {
			if i == 3 {
				fmt.Fprintf(&b, " and %d other messages", len(r.f.errs)-3)
				break
			}
			fmt.Fprintf(&b, " %d × `%s`;", e.n, strings.ReplaceAll(e.msg, "`", "'"))
		}
		b.WriteString("\n")
		if r.ch.unknownRows > 0 {
			fmt.Fprintf(&b, "  %d rows in the table were never written by a worker of this run.\n", r.ch.unknownRows)
		}
	}
	return b.String()
}
