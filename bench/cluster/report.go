package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/shoalpool/shoal/bench/internal/mdtable"
	"github.com/shoalpool/shoal/internal/pgcount"
)

// markdown renders the cells as a fragment for BENCHMARKS.md.
func markdown(cfg config, cells []cell, cmd, machine string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### PostgreSQL from %d processes on a budget of %d connections\n\n", cfg.workers, cfg.budget)
	fmt.Fprintf(&b, "Machine: %s.\n", machine)
	fmt.Fprintf(&b, "Command (from bench/): `%s`\n\n", cmd)
	fmt.Fprintf(&b, "%d worker processes, each with %d goroutines (the skewed load: worker 0 with %d) and a pool of %d "+
		"(the static split: %d); %.0f%% of the queries `%s`, the rest `%s`; %v of warm-up, then %v measured. "+
		"Latency is the caller's, the wait for a connection included. Errors count the warm-up too. "+
		"\"most at server\" is the most connections PostgreSQL held for the contender in any sample, taken every %v "+
		"from before the first worker started until the last had exited.\n\n",
		cfg.workers, cfg.goroutines, cfg.skew*cfg.goroutines, cfg.maxConns, cfg.budget/cfg.workers,
		100*cfg.sleepShare, querySleep, querySelect, cfg.warmup, cfg.duration, pgcount.DefaultInterval)
	mdtable.Header(&b, "load", "contender", "q/s", "q/s per worker", "p50", "p99", "p99 per worker", "errors",
		"most at server (limit)", "samples over the limit")
	for _, c := range cells {
		if c.skipped != "" {
			fmt.Fprintf(&b, "| %s | %s | skipped: %s | | | | | | | |\n", c.load, c.contender, c.skipped)
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
		fmt.Fprintf(&b, "| %s | %s | %.0f | %s | %s | %s | %s ms | %d | %d (%d) | %d of %d |\n",
			c.load, c.contender, c.qps, strings.Join(per, " / "), ms(c.p50), ms(c.p99), strings.Join(p99s, " / "), c.errors,
			c.server.Max, c.limit, len(c.server.Over), len(c.server.Samples))
	}
	b.WriteString("\n")
	for _, name := range cfg.contenders {
		if c, ok := contenderByName(name); ok {
			fmt.Fprintf(&b, "- %s: %s.\n", c.name, c.about)
		}
	}
	b.WriteString("\nHow the server's connections are counted (pg_stat_activity): the direct contenders by " +
		"their application_name, " + cfg.appName + ", over TCP; PgBouncer's as the role's backends that came " +
		"over the Unix socket, the way scripts/services.sh has PgBouncer connect, whatever application_name " +
		"the client they last served gave them (so another client of the same PgBouncer pool at the same " +
		"time would be counted too).\n")
	for _, c := range cells {
		if c.firstError != "" {
			fmt.Fprintf(&b, "\nFirst error, %s, %s load: `%s`\n", c.contender, c.load, c.firstError)
		}
		if c.server.Errors > 0 {
			fmt.Fprintf(&b, "\n%d samples failed, %s, %s load: %v\n", c.server.Errors, c.contender, c.load, c.server.LastErr)
		}
	}
	return b.String()
}

// ms formats a latency in milliseconds, two decimals.
func ms(d time.Duration) string {
	return fmt.Sprintf("%.2f ms", float64(d)/float64(time.Millisecond))
}
