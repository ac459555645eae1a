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
	rf readFigures
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
		"The new primary writes without a synchronous standby, so its rate can exceed the one before the fault. "+
		"%s; Close after the run is the time to close every pool the run opened.%s\n\n",
		s.workers, s.deadline, s.duration, s.faultAt.Seconds(), fullWindow, 100*fullShare, warmup.Seconds(), alongside(s), rejoinCase(s, rs))
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
		writeErrs(&b, r.f.errs)
		if r.ch.unknownRows > 0 {
			fmt.Fprintf(&b, "  %d rows in the table were never written by a worker of this run.\n", r.ch.unknownRows)
		}
	}
	rejoinsMarkdown(&b, rs)
	if s.readers > 0 {
		readsMarkdown(&b, s, rs)
	}
	return b.String()
}

// hasRejoin reports whether any of rs is a rejoin run.
func hasRejoin(rs []result) bool {
	for _, r := range rs {
		if r.o.fault == rejoin {
			return true
		}
	}
	return false
}

// rejoinCase describes the rejoin case when the report has it.
func rejoinCase(s spec, rs []result) string {
	if !hasRejoin(rs) {
		return ""
	}
	return fmt.Sprintf(" rejoin: as stopped, and once the promotion has completed the old primary is brought back as a standby of the new one "+
		"(internal/pgpair's Rejoin: pg_rewind onto the new primary's timeline, then started as its streaming standby; it returns once the standby streams) "+
		"while the workers and readers go on; a rejoin run lasts until %v after Rejoin returned (-after-rejoin), %v at least, "+
		"so its length is its own (below) and its writes/s in the last 2s are the new primary's with an asynchronous standby.", s.afterRejoin, s.duration)
}

// rejoinsMarkdown writes when each rejoin run's Rejoin began and returned,
// and how long the run lasted.
func rejoinsMarkdown(b *strings.Builder, rs []result) {
	if !hasRejoin(rs) {
		return
	}
	b.WriteString("\nThe rejoins, timed from the start of the run:\n\n")
	mdtable.Header(b, "case", "pool", "Rejoin began", "Rejoin took", "run length")
	for _, r := range rs {
		if r.o.fault != rejoin {
			continue
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s |\n", r.o.fault, r.o.contender,
			ms(r.o.promotedAt), ms(r.o.rejoinedAt-r.o.promotedAt), ms(r.o.length))
	}
}

// alongside says what ran beside the writers.
func alongside(s spec) string {
	if s.readers == 0 {
		return "No readers ran beside the writers (-readers 0)"
	}
	return fmt.Sprintf("%d readers ran beside the writers, in pools of their own (below)", s.readers)
}

// writeErrs ends a list item with the first messages of errs.
func writeErrs(b *strings.Builder, errs []errCount) {
	for i, e := range errs {
		if i == 3 {
			fmt.Fprintf(b, " and %d other messages", len(errs)-3)
			break
		}
		fmt.Fprintf(b, " %d × `%s`;", e.n, strings.ReplaceAll(e.msg, "`", "'"))
	}
	b.WriteString("\n")
}

// readsMarkdown writes the readers' table and errors.
func readsMarkdown(b *strings.Builder, s spec, rs []result) {
	fmt.Fprintf(b, "\n#### Reads through the failover\n\n")
	fmt.Fprintf(b, "In the same runs, %d readers each ran `%s`, one at a time with the writes' %v deadline and a %v pause after each, for the whole run. "+
		"shoalpgx: through `pool.Reads()`, its read pool on the writers' connection string (no pool_max_standby_lag: any standby that answers qualifies). "+
		"pgxpool routes no reads, so its readers use a second pgxpool on the same string with target_session_attrs=prefer-standby instead of read-write: "+
		"it picks a standby when it dials and keeps the connection whatever the server becomes, the nearest pgxpool comes to a read pool. "+
		"The server that answers names itself by its port (127.0.0.1:5441 the old primary, 127.0.0.1:5442 the standby, promoted) and says whether it is in recovery as it answers, so a read answered in the middle of the promotion is counted by what it was then. "+
		"Before the fault: reads answered before it; after the promotion: reads begun once it had completed; during the failover: the rest (the stop, and the promotion itself). "+
		"After the promotion the pair has no standby, since the old primary does not rejoin within the run: every read then can only be answered by the new primary, 5442, so \"by a standby\" after is 0%% by construction and \"by the primary\" is the point. "+
		"%s"+
		"Failed reads are counted apart from the answered ones the shares are of.\n\n",
		s.readers, readSQL, s.deadline, s.readPause, rejoinReadsNote(rs))
	mdtable.Header(b, "case", "pool", "reads before the fault", "by a standby", "reads during the failover", "by a standby",
		"reads after the promotion", "by a standby", "by the primary", "failed reads (before / during / after)")
	for _, r := range rs {
		f := r.rf
		fmt.Fprintf(b, "| %s | %s | %d | %s | %d | %s | %d | %s | %s | %d / %d / %d |\n",
			r.o.fault, r.o.contender, f.before.answered, share(f.before.byStandby, f.before.answered),
			f.during.answered, share(f.during.byStandby, f.during.answered),
			f.after.answered, share(f.after.byStandby, f.after.answered), share(f.after.answered-f.after.byStandby, f.after.answered),
			f.before.failed, f.during.failed, f.after.failed)
	}
	b.WriteString("\nThe most common read errors of each run:\n\n")
	for _, r := range rs {
		if len(r.rf.errs) == 0 {
			fmt.Fprintf(b, "- %s, %s: none\n", r.o.fault, r.o.contender)
		} else {
			fmt.Fprintf(b, "- %s, %s:", r.o.fault, r.o.contender)
			writeErrs(b, r.rf.errs)
		}
		if r.rf.unexpected > 0 {
			fmt.Fprintf(b, "  %d reads were answered by a server in a role the pair did not have then (the old primary after the promotion, say).\n", r.rf.unexpected)
		}
	}
	rejoinReadsMarkdown(b, rs)
}

// rejoinReadsNote says how the reads table counts a rejoin run, when the
// report has one.
func rejoinReadsNote(rs []result) string {
	if !hasRejoin(rs) {
		return ""
	}
	return "The rejoin case is the exception: there \"after the promotion\" counts the reads begun before Rejoin returned, when the old primary may answer already, as a standby, once it has started; " +
		"the reads begun after Rejoin returned, with a standby in the pair again, are the last table's. "
}

// rejoinReadsMarkdown writes the table of the reads begun after Rejoin
// returned, when the report has a rejoin run.
func rejoinReadsMarkdown(b *strings.Builder, rs []result) {
	if !hasRejoin(rs) {
		return
	}
	b.WriteString("\n#### Reads after the old primary rejoined as a standby\n\n")
	b.WriteString("In the rejoin runs, the reads begun once Rejoin had returned: the old primary, 5441, is then a streaming standby of the new primary, 5442, " +
		"and a read pool that moves its reads back to a standby answers them from 5441. " +
		"First read by a standby: from Rejoin's start (the promotion's end; the rejoins table has how long Rejoin took) to the end of the first read a standby answered of those begun after it, " +
		"which may come before Rejoin returns, the old primary taking reads once it has started. " +
		"Failed reads are counted apart from the answered ones the shares are of.\n\n")
	mdtable.Header(b, "case", "pool", "reads after the rejoin", "by a standby", "by the primary", "first read by a standby, from Rejoin's start", "failed reads")
	for _, r := range rs {
		if r.o.fault != rejoin {
			continue
		}
		f := r.rf.rejoined
		fmt.Fprintf(b, "| %s | %s | %d | %s | %s | %s | %d |\n", r.o.fault, r.o.contender, f.answered,
			share(f.byStandby, f.answered), share(f.answered-f.byStandby, f.answered), ms(r.rf.firstStandby), f.failed)
	}
}
