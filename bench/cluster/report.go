package main

import (
	"fmt"
	"math"
	"strings"
	"time"

	"github.com/shoalpool/shoal/bench/internal/mdtable"
	"github.com/shoalpool/shoal/internal/pgcount"
)

// markdown renders the cells as a fragment for BENCHMARKS.md.
func markdown(cfg config, cells []cell, cmd, machine string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### Cluster budget: PostgreSQL from %d processes on %d connections\n\n", cfg.workers, cfg.budget)
	fmt.Fprintf(&b, "Machine: %s.\n", machine)
	fmt.Fprintf(&b, "Command (from bench/): `%s`\n\n", cmd)
	fmt.Fprintf(&b, "%d worker processes, each with a pool of %d (the static split: %d); loads: %s. "+
		"%.0f%% of the queries `%s`, the rest `%s`, each goroutine in a closed loop; %v of warm-up, then %v measured. "+
		"Latency is the caller's, the wait for a connection included. Errors count the warm-up too. "+
		"\"most at server\" is the most connections PostgreSQL held for the contender in any sample, taken every %v "+
		"from before the first worker started until the last had exited.\n\n",
		cfg.workers, cfg.maxConns, cfg.budget/cfg.workers, loadsAbout(cfg),
		100*cfg.sleepShare, querySleep(cfg.pause), querySelect, cfg.warmup, cfg.duration, pgcount.DefaultInterval)
	if rounds := byRound(cells); len(rounds) > 1 {
		fmt.Fprintf(&b, "%d rounds, each running every load in turn and, under each load, its contenders one after the other: "+
			"in the order given in odd rounds, reversed in even ones (so that of any two contenders each runs first in alternate "+
			"rounds; a middle one stays in the middle). Each round's cells, then the rounds summed up.\n\n", len(rounds))
		explained := false
		for _, rc := range rounds {
			r := rc[0].round
			fmt.Fprintf(&b, "#### Round %d (%s)\n\n", r, strings.Join(roundOrder(cfg.contenders, r), ", "))
			cellsTable(&b, rc)
			explained = sharesTable(&b, cfg, rc, !explained) || explained
		}
		roundsSummary(&b, cfg, cells, len(rounds))
	} else {
		cellsTable(&b, cells)
		targetsTable(&b, cfg, cells)
		sharesTable(&b, cfg, cells, true)
	}
	for _, name := range cfg.contenders {
		if c, ok := contenderByName(name); ok {
			fmt.Fprintf(&b, "- %s: %s.\n", c.name, c.about)
		}
		if name == "etcd" {
			idle := "its default, 2s"
			if cfg.etcdIdle > 0 {
				idle = cfg.etcdIdle.String()
			}
			fmt.Fprintf(&b, "  Each worker's member: Min %d, IdleTime %s, TTL the default (5s); etcd at %s; "+
				"every key a cell created is deleted at its end (leases revoked by Close, the size key by the runner).\n",
				cfg.etcdMin, idle, strings.Join(cfg.etcd, ","))
		}
	}
	b.WriteString("\nHow the server's connections are counted (pg_stat_activity): the direct contenders by " +
		"their application_name, " + cfg.appName + ", over TCP; PgBouncer's as the role's backends that came " +
		"over the Unix socket, the way scripts/services.sh has PgBouncer connect, whatever application_name " +
		"the client they last served gave them (so another client of the same PgBouncer pool at the same " +
		"time would be counted too).\n")
	for _, c := range cells {
		if c.firstError != "" {
			fmt.Fprintf(&b, "\nFirst error, %s%s, %s load: `%s`\n", cfg.roundLabel(c.round), c.contender, c.load, c.firstError)
		}
		if c.etcdLeftover > 0 {
			fmt.Fprintf(&b, "\n%d etcd keys left by the workers (deleted by the runner), %s%s load: a Close did not revoke its lease\n", c.etcdLeftover, cfg.roundLabel(c.round), c.load)
		}
		if c.server.Errors > 0 {
			fmt.Fprintf(&b, "\n%d samples failed, %s%s, %s load: %v\n", c.server.Errors, cfg.roundLabel(c.round), c.contender, c.load, c.server.LastErr)
		}
	}
	return b.String()
}

// cellsTable writes a row per cell: its throughput, latency, errors and
// connections at the server.
func cellsTable(b *strings.Builder, cells []cell) {
	mdtable.Header(b, "load", "contender", "q/s", "q/s per worker", "p50", "p99", "p99 per worker", "errors",
		"most at server (limit)", "samples over the limit", "CPU idle", "workers' CPU")
	for _, c := range cells {
		if c.skipped != "" {
			fmt.Fprintf(b, "| %s | %s | skipped: %s | | | | | | | | | |\n", c.load, c.contender, c.skipped)
			continue
		}
		per := make([]string, len(c.perWorker))
		for i, q := range c.perWorker {
			per[i] = fmt.Sprintf("%.0f", q)
		}
		p99s := make([]string, len(c.perWorkerP99))
		for i, d := range c.perWorkerP99 {
			p99s[i] = fmt.Sprintf("%.0f", float64(d)/float64(time.Millisecond))
		}
		fmt.Fprintf(b, "| %s | %s | %.0f | %s | %s | %s | %s ms | %d | %d (%d) | %d of %d | %s | %s |\n",
			c.load, c.contender, c.qps, strings.Join(per, " / "), ms(c.p50), ms(c.p99), strings.Join(p99s, " / "), c.errors,
			c.server.Max, c.limit, len(c.server.Over), len(c.server.Samples), percent(c.idle), c.cpuPerQuery())
	}
	b.WriteString("\n")
}

// loadsAbout says what each of the run's loads is.
func loadsAbout(cfg config) string {
	var parts []string
	for _, l := range cfg.loads {
		switch l {
		case loadUniform:
			parts = append(parts, fmt.Sprintf("uniform, %d goroutines in every worker", cfg.goroutines))
		case loadSkewed:
			parts = append(parts, fmt.Sprintf("skewed, %d goroutines in worker 0 and %d in each other "+
				"(demand above the static share in one worker, below it in the others)", cfg.hot, cfg.cold))
		case loadSkewedCapped:
			parts = append(parts, fmt.Sprintf("skewed-capped, %d goroutines in worker 0 and %d in each other "+
				"(every worker's demand at its pool's cap of %d, so a budget's fair shares are the static split's)",
				cfg.skew*cfg.goroutines, cfg.goroutines, cfg.maxConns))
		}
	}
	return strings.Join(parts, "; ")
}

// ms formats a latency in milliseconds, two decimals.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}

// sharesTable writes, for the shoal contenders, what the pools' own Stats
// said over the measured window: the share the budget gave each worker
// against what it asked for, and how soon after go the shares settled.
// explain says what the columns are, once in a report of several rounds;
// it returns whether it wrote a table.
func sharesTable(b *strings.Builder, cfg config, cells []cell, explain bool) bool {
	var rows []cell
	for _, c := range cells {
		if c.skipped == "" && c.contender != "pgbouncer" && len(c.timelines) > 0 {
			rows = append(rows, c)
		}
	}
	if len(rows) == 0 {
		return false
	}
	if explain {
		fmt.Fprintf(b, "The pools' own Stats, sampled every %v in every worker; means over the measured window "+
			"less its last %v (where the first worker to finish has left and the others grow into its share). "+
			"\"connections filled\" is when every pool first held its share (or its demand, if smaller), less one, in connections:\n\n",
			sampleEvery, windowTail)
	}
	mdtable.Header(b, "load", "contender", "share per worker", "demand per worker", "connections per worker",
		"dials in the window", "shares settled after go", "connections filled after go")
	for _, c := range rows {
		sums := summarize(c, cfg.warmup, cfg.duration)
		settled := "never"
		if at := settledAt(c, cfg.warmup, cfg.duration); at >= 0 {
			settled = fmt.Sprintf("%.1f s", at.Seconds())
		}
		filled := "never"
		if at := filledAt(c, cfg.warmup, cfg.duration); at >= 0 {
			filled = fmt.Sprintf("%.1f s", at.Seconds())
		}
		fmt.Fprintf(b, "| %s | %s | %s | %s | %s | %s | %s | %s |\n", c.load, c.contender,
			perWorker(sums, func(s shareSummary) string { return fmt.Sprintf("%.1f", s.share) }),
			perWorker(sums, func(s shareSummary) string { return fmt.Sprintf("%.1f", s.demand) }),
			perWorker(sums, func(s shareSummary) string { return fmt.Sprintf("%.1f", s.conns) }),
			perWorker(sums, func(s shareSummary) string { return fmt.Sprintf("%d", s.dials) }),
			settled, filled)
	}
	b.WriteString("\n")
	return true
}

// percent formats a share as a percentage, or "-" for -1 (not measured).
func percent(f float64) string {
	if f < 0 {
		return "-"
	}
	return fmt.Sprintf("%.0f%%", 100*f)
}

// targetsTable writes, per load, the etcd contender's throughput as a
// multiple of the static split's and PgBouncer's, beside the budget's
// targets: no error and never above the budget at the server, at least
// the static split on the uniform load and 1.3 times it on the skewed one,
// at least PgBouncer. It is for a run of one round, whose ratios are one
// sample; roundsSummary judges several rounds on their medians.
func targetsTable(b *strings.Builder, cfg config, cells []cell) {
	var rows []string
	for _, load := range cfg.loads {
		j, ok := judge(cells, load, cfg.budget)
		if !ok {
			continue
		}
		r := j.rounds[0]
		row := fmt.Sprintf("| %s | %d errors, at most %d of %d: %s |", load, r.errors, r.most, cfg.budget, met(r.safe))
		for _, vs := range []struct {
			ratio, want float64
		}{{r.vsStatic, staticTarget(load)}, {r.vsBouncer, bouncerTarget}} {
			if math.IsNaN(vs.ratio) {
				row += " - |"
				continue
			}
			row += fmt.Sprintf(" %.2fx (target %.1fx): %s |", vs.ratio, vs.want, met(vs.ratio >= vs.want))
		}
		rows = append(rows, row)
	}
	if len(rows) == 0 {
		return
	}
	b.WriteString("The etcd contender against the targets (this run's throughput ratios):\n\n")
	mdtable.Header(b, "load", "errors and connections at the server", "etcd / static", "etcd / pgbouncer")
	for _, r := range rows {
		b.WriteString(r + "\n")
	}
	b.WriteString("\n")
}

// met says whether a target was met.
func met(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}
