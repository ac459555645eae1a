package main

import (
	"fmt"
	"strings"

	"github.com/shoalpool/shoal/bench/internal/mdtable"
)

// downText is what differs between the PostgreSQL and the HTTP outage in
// the report.
type downText struct {
	title   string // the section's heading
	setup   string // the sentence above the table
	call    string // "query" or "request"
	calls   string // "queries" or "requests"
	dial    string // what a dial attempt is
	legend  string // the case's own part of the legend
	connsAt string // where the connections are counted
}

// downMarkdown writes one outage case's table, legend and errors.
func downMarkdown(b *strings.Builder, txt downText, s downSpec, runs []downRun) {
	fmt.Fprintf(b, "#### %s\n\n%s\n\n", txt.title, txt.setup)
	cols := []string{"pool", txt.calls + " served", "per second before", "failed", "failed before the stop", "failed, begun after the return",
		"failed: p50 / p99 / max", txt.dial + " while down", "most in flight", "80% throughput after", fmt.Sprintf("%d connections after", s.maxConns),
		"stop took", "start took"}
	if s.rounds > 1 {
		cols = append([]string{"round"}, cols...)
	}
	mdtable.Header(b, cols...)
	for _, r := range runs {
		f := r.f
		if s.rounds > 1 {
			fmt.Fprintf(b, "| %d ", r.round)
		}
		fmt.Fprintf(b, "| %s | %d | %.0f | %d | %d | %d | %s / %s / %s | %d | %d | %s | %s | %s | %s |\n",
			r.pool, f.served, f.rateBefore, f.failed, f.failedBeforeStop, f.failedAfterReturn,
			dur(f.failedP50), dur(f.failedP99), dur(f.failedMax), f.dials.started, f.dials.mostInFlight,
			dur(f.recovered), dur(r.conns), dur(r.t.down-r.t.stop), dur(r.t.returned-r.t.back))
	}
	fmt.Fprintf(b, "\n%d workers, each making one %s after another, each with a %v deadline; %s "+
		"The server stops %v after the start, stays down %v once gone, and the run goes on %v after its return. "+
		"Per second before: successful %s from second %v to the stop. "+
		"Failed: every failed %s; p50 / p99 / max are their latencies as the workers saw them; \"begun after the return\" counts those begun once the server answered again. "+
		"%s while down: those begun from the stop to the return, counted in the dialer; most in flight: the most under way at once in that time. "+
		"80%% throughput after: from the return to the end of the first %v bucket (aligned on the return) with at least %.0f%% of the rate before. "+
		"%d connections after: from the return to the first moment %s. "+
		"Stop took: from the stop's start until the server had gone; start took: from the start until it answered. %s %s\n\n",
		s.workers, txt.call, s.deadline, pacing(s), s.before, s.down, s.after, txt.calls, s.warm.Seconds(), txt.call,
		upperFirst(txt.dial), bucketWidth, 100*recoveryShare, s.maxConns, txt.connsAt, txt.legend, roundsNote(s.rounds))
	for _, r := range runs {
		if r.workersStuck || r.closeStuck {
			fmt.Fprintf(b, "%s, round %d: workers stuck past their deadline: %v; close stuck: %v.\n\n", r.pool, r.round, r.workersStuck, r.closeStuck)
		}
		if r.f.servedWhileDown > 0 {
			fmt.Fprintf(b, "%s, round %d: %d %s begun once the server had gone succeeded before it returned (none can: a measuring error).\n\n", r.pool, r.round, r.f.servedWhileDown, txt.calls)
		}
	}
	b.WriteString("The most common errors:\n\n")
	for _, r := range runs {
		label := r.pool
		if s.rounds > 1 {
			label = fmt.Sprintf("%s, round %d", r.pool, r.round)
		}
		writeErrs(b, label, r.f.errs)
	}
	b.WriteString("\n")
}

// pacing says how the workers pace themselves after a failure, and why.
func pacing(s downSpec) string {
	if s.failPause <= 0 {
		return "a worker whose call failed makes its next one at once, as a service's request handlers would: " +
			"the failures then come as fast as the pool fails them (-fail-pause 0)."
	}
	return fmt.Sprintf("a worker whose call failed waits %v before its next one; a successful one goes straight on. "+
		"A real service's handlers would not pause after a failure, but its requests come from outside at their own pace, "+
		"where workers in a closed loop without a pause would retry as fast as the pool fails them: a pool that fails at once "+
		"would spin the machine's CPUs (which the restarting server needs too) and pile up failures in proportion to its speed. "+
		"The pause caps that at %.0f failures a second per worker, far below the deadline, and costs the successful calls nothing.",
		s.failPause, 1/s.failPause.Seconds())
}

// upperFirst capitalises s's first letter, to open a sentence.
func upperFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToUpper(s[:1]) + s[1:]
}

// roundsNote says how many outages each pool went through.
func roundsNote(rounds int) string {
	if rounds <= 1 {
		return "One outage per pool (-rounds 1): on this shared machine a single run's rate can swing by a quarter from one 100ms to the next, so a time to 80% can be one unlucky bucket late; -rounds N repeats the outage, the pools' order reversed in every other round."
	}
	return fmt.Sprintf("%d outages per pool, a row each, the pools' order reversed in every other round.", rounds)
}
