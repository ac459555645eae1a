package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// preflightSweep runs --query once, read-only, and compares --max-conns
// with the room the server has now, before any configuration fans out: a
// typo fails once with the server's error, a query that writes is refused
// unless --allow-writes, and a --max-conns that the server, the role or
// the database cannot give beside the connections open is a usage error
// naming the limit that binds.
func preflightSweep(ctx context.Context, o *options, t *target, errOut io.Writer) int {
	if pgPreflight == nil {
		return exitOK
	}
	pctx, cancel := context.WithTimeout(ctx, o.dialTimeout+10*time.Second)
	defer cancel()
	query := o.query
	srv, err := pgPreflight(pctx, t.Raw, query)
	switch {
	case err != nil && interruptedEarly(ctx, "sweep", errOut):
		return exitInterrupted
	case errors.Is(err, errQueryWrites) && !o.allowWrites:
		fmt.Fprintf(errOut, "shoal sweep: --query %q writes (the server refused it in a read-only transaction: %v); the sweep runs it thousands of times, so pass --allow-writes to run it anyway\n", o.query, strings.TrimPrefix(err.Error(), errQueryWrites.Error()+": "))
		return exitUsage
	case errors.Is(err, errQueryWrites):
	case err != nil:
		fmt.Fprintf(errOut, "shoal sweep: --query %q: %v\n", o.query, err)
		return exitFailed
	}
	if msg := sweepOverLimit(o.maxConns, srv); msg != "" {
		fmt.Fprintf(errOut, "shoal sweep: %s\n", msg)
		return exitUsage
	}
	return exitOK
}

// runSweep is `shoal sweep`.
func runSweep(ctx context.Context, o *options, stdout, stderr io.Writer) int {
	t, err := parseTarget(o.target)
	if err != nil {
		fmt.Fprintf(stderr, "shoal sweep: %s\n", redactRaw(err.Error()))
		return exitUsage
	}
	out, errOut := &outputWriter{w: scrubWriter{stdout, t}}, scrubWriter{stderr, t}
	if t.Kind != targetPostgres {
		fmt.Fprintf(errOut, "shoal sweep: --target %s: sweep needs a postgres:// target\n", t.Redacted)
		return exitUsage
	}
	if newShoalPGX == nil || pgDefaultPool == nil {
		fmt.Fprintf(errOut, "shoal sweep: not available yet: shoalpgx, the PostgreSQL adapter it runs on, has not landed\n")
		return exitFailed
	}
	if err := probe(ctx, t, o.dialTimeout); err != nil {
		if interruptedEarly(ctx, "sweep", errOut) {
			return exitInterrupted
		}
		fmt.Fprintf(errOut, "shoal sweep: %v\n", err)
		return exitFailed
	}
	if code := preflightSweep(ctx, o, t, errOut); code != exitOK {
		return code
	}
	defConns, defParts, err := pgDefaultPool(t.Raw)
	if err != nil {
		fmt.Fprintf(errOut, "shoal sweep: --target %s: %v\n", t.Redacted, err)
		return exitUsage
	}
	table := sweepTable(sweepTotals(o.maxConns, o.quick), defConns, defParts)
	e := &env{target: t, workers: o.workers, dialTimeout: o.dialTimeout}
	var cases []benchrun.Case
	for _, c := range table {
		cases = append(cases, pgPoolCase(e, c.name(), c.maxConns, c.partitions, o.query))
	}
	report := &benchrun.Report{
		Command: "sweep", Target: t.Redacted, Machine: benchrun.ThisMachine(),
		Date: time.Now(), Quick: o.quick,
		Warmup: o.warmup, Duration: o.duration, Rounds: o.rounds,
	}
	sr := benchrun.ScenarioResult{
		Name: "sweep", Server: t.Redacted,
		Description: fmt.Sprintf("%d configurations of %d to %d connections, measured against the default; %s", len(table), table[0].maxConns, o.maxConns, defaultName(table, defConns, defParts, o.maxConns)),
	}
	tables := !o.json && !o.csv
	if tables {
		benchrun.WriteHeader(out, report, time.Duration(o.rounds*len(cases))*(o.warmup+o.duration+setupAllowance))
		benchrun.WriteScenarioTitle(out, &sr)
	}
	var progress *benchrun.Progress
	if f, ok := stderr.(*os.File); ok {
		progress = benchrun.NewProgress(f, time.Duration(o.rounds*len(cases))*(o.warmup+o.duration+setupAllowance))
	}
	rounds := runRounds(ctx, o, cases, o.workers, o.rounds, progress, func(c benchrun.Case) string { return c.Name })
	progress.Stop()
	report.Interrupted = ctx.Err() != nil
	gr := benchrun.GroupResult{Title: fmt.Sprintf("%s, %s, %d rounds", benchrun.Plural(o.workers, "worker"), o.query, o.rounds), Workers: o.workers}
	for i := range cases {
		if len(rounds[i]) > 0 {
			gr.Results = append(gr.Results, mergeRounds(rounds[i]))
		}
	}
	sr.Groups = append(sr.Groups, gr)
	report.Scenarios = append(report.Scenarios, sr)
	if tables {
		benchrun.WriteGroup(out, report, sr.Name, &gr)
	}

	switch {
	case report.Interrupted:
	case report.Failed():
		// The best may be among the configurations that failed (a setup
		// that timed out, say): naming one of the rest would mislead.
		fmt.Fprintf(errOut, "shoal sweep: some configurations failed; no recommendation until every one runs\n")
	default:
		v, configs := judge(table, gr.Results)
		if tables {
			writeRounds(out, table, gr.Results, v)
		}
		report.Recommendation = exportVerdict(v, table, configs, gr.Results, t, o.rounds)
		if tables {
			writeRecommendation(out, report.Recommendation)
			writeCappedDefault(out, defConns, o.maxConns)
		}
	}
	// With nothing measured, finish says so and fails the run.
	code := finish(o, report, out, errOut)
	if code == exitOK && report.Recommendation == nil {
		code = exitFailed
	}
	return code
}

// defaultName describes the default configuration for the scenario line:
// the pool shoalpgx opens, defConns connections in defParts partitions,
// or, when that is more than --max-conns, the configuration that stands
// for it, saying so.
func defaultName(table []sweepConfig, defConns, defParts, maxConns int) string {
	for _, c := range table {
		if c.isDefault {
			s := fmt.Sprintf("the default, %s: %s in %s, what shoalpgx opens on this connection string and machine without settings",
				strings.TrimSuffix(c.name(), defaultSuffix), benchrun.Plural(c.maxConns, "connection"), benchrun.Plural(c.partitions, "partition"))
			if defConns > maxConns {
				s += fmt.Sprintf(", %s in %s, capped at --max-conns %d",
					benchrun.Plural(defConns, "connection"), benchrun.Plural(defParts, "partition"), maxConns)
			}
			return s
		}
	}
	return "none"
}

// writeCappedDefault follows the verdict when the sweep could not measure
// the default pool itself, defConns connections, within --max-conns: the
// verdict compared with a smaller stand-in, which "keep the default" must
// not pass for the pool a user keeps.
func writeCappedDefault(w io.Writer, defConns, maxConns int) {
	if defConns <= maxConns {
		return
	}
	fmt.Fprintf(w, "The default compared with here is capped at --max-conns %d: shoalpgx opens %s on this connection string, and --max-conns %d or more measures the default itself.\n",
		maxConns, benchrun.Plural(defConns, "connection"), defConns)
}

// judge runs decide over the merged results, which are in table order.
func judge(table []sweepConfig, results []benchrun.Result) (verdict, []configRounds) {
	configs := make([]configRounds, len(results))
	def := 0
	for i, r := range results {
		configs[i] = configRounds{name: r.Name, ips: r.RoundIPS}
		if table[i].isDefault {
			def = i
		}
	}
	return decide(configs, def, func(i, j int) bool { return table[i].less(table[j]) }), configs
}

// exportVerdict turns the verdict into the report's form, with the
// settings to paste when a configuration beat the default.
func exportVerdict(v verdict, table []sweepConfig, configs []configRounds, results []benchrun.Result, t *target, rounds int) *benchrun.Recommendation {
	d := results[v.def]
	rec := &benchrun.Recommendation{
		Name: d.Name, Pool: d.Pool, IPS: d.IPS, KeepDefault: true,
		Default: d.Name, DefaultIPS: d.IPS, Ratio: 1, RatioLow: 1, RatioHigh: 1,
		Confidence: v.Level, Rounds: rounds,
	}
	if v.Pick < 0 {
		return rec
	}
	p, best, c := results[v.Pick], results[v.Best], v.VsDefault[v.Pick]
	rec.Name, rec.Pool, rec.IPS, rec.KeepDefault = p.Name, p.Pool, p.IPS, false
	rec.Ratio, rec.RatioLow, rec.RatioHigh = c.Ratio, c.Low, c.High
	rec.Best, rec.BestIPS = best.Name, best.IPS
	if pgPoolSettings != nil {
		rec.ConnString, rec.GoConfig = pgPoolSettings(t.Raw, table[v.Pick].maxConns, table[v.Pick].partitions)
	}
	return rec
}

// writeRecommendation prints the recommendation under the tables.
func writeRecommendation(w io.Writer, r *benchrun.Recommendation) {
	if r.KeepDefault {
		fmt.Fprintf(w, "\nNo configuration is significantly better than the default (%s, %s ops/s over %d rounds): keep the default.\n",
			strings.TrimSuffix(r.Default, defaultSuffix), benchrun.FormatOps(r.DefaultIPS), r.Rounds)
		return
	}
	p := r.Pool
	fmt.Fprintf(w, "\nRecommendation: %s x %s (%s in all): %s ops/s, %.2fx the default's %s (%.2fx to %.2fx at %s confidence)",
		benchrun.Plural(p.Partitions, "partition"), benchrun.Plural(p.ConnsPerPartition, "connection"), benchrun.Plural(p.MaxConns, "connection"),
		benchrun.FormatOps(r.IPS), r.Ratio, benchrun.FormatOps(r.DefaultIPS), r.RatioLow, r.RatioHigh, benchrun.FormatLevel(r.Confidence))
	if r.Name == r.Best {
		fmt.Fprintf(w, "; the fastest.\n")
	} else {
		fmt.Fprintf(w, "; the smallest not significantly slower than the fastest, %s (%s ops/s).\n", r.Best, benchrun.FormatOps(r.BestIPS))
	}
	if r.ConnString != "" {
		fmt.Fprintf(w, "\nConnection string%s:\n  %s\n", passwordBackIn(r.ConnString), r.ConnString)
	}
	if r.GoConfig != "" {
		fmt.Fprintf(w, "\nGo:\n")
		for _, line := range strings.Split(r.GoConfig, "\n") {
			if line == "" {
				fmt.Fprintln(w)
				continue
			}
			fmt.Fprintf(w, "  %s\n", line)
		}
	}
}
