package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// sweepTolerance: the recommendation is the smallest configuration whose
// throughput is within this fraction of the best one's.
const sweepTolerance = 0.03

// maxSweepPartitions bounds the partitions the sweep tries.
const maxSweepPartitions = 32

// sweepTable divides total connections into 1, 2, 4, ... partitions, the
// counts that divide it evenly, so that every configuration opens exactly
// total connections (10 in 4 partitions would open 8).
func sweepTable(total int) []partitionConfig {
	var out []partitionConfig
	for p := 1; p <= min(total, maxSweepPartitions); p *= 2 {
		if total%p == 0 {
			out = append(out, partitionConfig{partitions: p, connsPerPartition: total / p})
		}
	}
	return out
}

// preflightSweep runs --query once, read-only, and compares --max-conns
// with what the server allows, before any configuration fans out: a typo
// fails once with the server's error, a query that writes is refused
// unless --allow-writes, and a --max-conns the server cannot give is a
// usage error naming its limit.
func preflightSweep(ctx context.Context, o *options, t *target, errOut io.Writer) int {
	if pgPreflight == nil {
		return exitOK
	}
	pctx, cancel := context.WithTimeout(ctx, o.dialTimeout+10*time.Second)
	defer cancel()
	query := o.query
	srv, err := pgPreflight(pctx, t.Raw, query)
	switch {
	case errors.Is(err, errQueryWrites) && !o.allowWrites:
		fmt.Fprintf(errOut, "shoal sweep: --query %q writes (the server refused it in a read-only transaction: %v); the sweep runs it thousands of times, so pass --allow-writes to run it anyway\n", o.query, strings.TrimPrefix(err.Error(), errQueryWrites.Error()+": "))
		return exitUsage
	case errors.Is(err, errQueryWrites):
	case err != nil:
		fmt.Fprintf(errOut, "shoal sweep: --query %q: %v\n", o.query, err)
		return exitFailed
	}
	limit := srv.MaxConnections - srv.Reserved
	if o.maxConns > limit {
		fmt.Fprintf(errOut, "shoal sweep: --max-conns %d: the server allows %d client connections (max_connections %d, %d reserved), %d of them open now; use --max-conns %d or fewer\n",
			o.maxConns, limit, srv.MaxConnections, srv.Reserved, srv.InUse, max(1, limit-srv.InUse))
		return exitUsage
	}
	if srv.RoleLimit >= 0 && o.maxConns > srv.RoleLimit {
		fmt.Fprintf(errOut, "shoal sweep: --max-conns %d: the role allows %d connections (CONNECTION LIMIT); use --max-conns %d or fewer\n", o.maxConns, srv.RoleLimit, srv.RoleLimit)
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
	out, errOut := scrubWriter{stdout, t}, scrubWriter{stderr, t}
	if t.Kind != targetPostgres {
		fmt.Fprintf(errOut, "shoal sweep: --target %s: sweep needs a postgres:// target\n", t.Redacted)
		return exitUsage
	}
	if newShoalPGX == nil {
		fmt.Fprintf(errOut, "shoal sweep: not available yet: shoalpgx, the PostgreSQL adapter it runs on, has not landed\n")
		return exitFailed
	}
	if err := probe(ctx, t, o.dialTimeout); err != nil {
		fmt.Fprintf(errOut, "shoal sweep: %v\n", err)
		return exitFailed
	}
	if code := preflightSweep(ctx, o, t, errOut); code != exitOK {
		return code
	}
	e := &env{target: t, workers: o.workers, dialTimeout: o.dialTimeout}
	g := benchrun.Group{Title: fmt.Sprintf("%d workers, %d connections, %s", o.workers, o.maxConns, o.query), Workers: o.workers}
	for _, pc := range sweepTable(o.maxConns) {
		g.Cases = append(g.Cases, pgPoolCase(e, partitionCaseName(pc), pc.partitions*pc.connsPerPartition, pc.partitions, o.query))
	}
	sc := scenario{name: "sweep", description: "partitions x connections per partition on your PostgreSQL"}
	report := &benchrun.Report{
		Command: "sweep", Target: t.Redacted, Machine: benchrun.ThisMachine(),
		Warmup: o.warmup, Duration: o.duration,
	}
	planned := []plannedScenario{{sc, &plan{server: t.Redacted, groups: []benchrun.Group{g}}}}

	execute(ctx, o, report, planned, out, stderr)
	if report.Failed() && !report.Interrupted {
		// The best may be among the configurations that failed (a setup
		// that timed out, say): naming one of the rest would mislead.
		fmt.Fprintf(errOut, "shoal sweep: some configurations failed; no recommendation until every one runs\n")
	} else if rec, ok := recommend(report); ok && !report.Interrupted {
		report.Recommendation = rec.export(t)
		if !o.json && !o.csv {
			writeRecommendation(out, report.Recommendation)
		}
	}
	// With nothing measured, finish says so and fails the run.
	code := finish(o, report, out, errOut)
	if code == exitOK && report.Recommendation == nil {
		code = exitFailed
	}
	return code
}

// recommendation is the sweep's answer.
type recommendation struct {
	pick, best benchrun.Result
}

// recommend picks, among the measured configurations, the smallest one
// (fewest connections, then fewest partitions) whose throughput is within
// sweepTolerance of the best.
func recommend(r *benchrun.Report) (recommendation, bool) {
	var ok []benchrun.Result
	for _, s := range r.Scenarios {
		for _, g := range s.Groups {
			for _, res := range g.Results {
				if res.Status == benchrun.StatusOK && res.Pool != nil {
					ok = append(ok, res)
				}
			}
		}
	}
	if len(ok) == 0 {
		return recommendation{}, false
	}
	best := ok[0]
	for _, res := range ok[1:] {
		if res.IPS > best.IPS {
			best = res
		}
	}
	var pick *benchrun.Result
	for i, res := range ok {
		if res.IPS < best.IPS*(1-sweepTolerance) {
			continue
		}
		if pick == nil || smaller(res.Pool, pick.Pool) {
			pick = &ok[i]
		}
	}
	return recommendation{pick: *pick, best: best}, true
}

// smaller orders configurations: fewer connections, then fewer partitions.
func smaller(a, b *benchrun.PoolConfig) bool {
	if a.MaxConns != b.MaxConns {
		return a.MaxConns < b.MaxConns
	}
	return a.Partitions < b.Partitions
}

// export turns the recommendation into the report's form, with the
// settings to paste.
func (rec recommendation) export(t *target) *benchrun.Recommendation {
	out := &benchrun.Recommendation{
		Name: rec.pick.Name, Pool: rec.pick.Pool, IPS: rec.pick.IPS,
		Best: rec.best.Name, BestIPS: rec.best.IPS, TolerancePct: sweepTolerance * 100,
	}
	if pgPoolSettings != nil {
		out.ConnString, out.GoConfig = pgPoolSettings(t.Raw, rec.pick.Pool.MaxConns, rec.pick.Pool.Partitions)
	}
	return out
}

// writeRecommendation prints the recommendation under the table.
func writeRecommendation(w io.Writer, r *benchrun.Recommendation) {
	p := r.Pool
	fmt.Fprintf(w, "\nRecommendation: %s x %s (%s in all): %s ops/s",
		plural(p.Partitions, "partition"), plural(p.ConnsPerPartition, "connection"), plural(p.MaxConns, "connection"), benchrun.FormatCount(r.IPS))
	if r.Name == r.Best {
		fmt.Fprintf(w, ", the best measured.\n")
	} else {
		fmt.Fprintf(w, ", within %.0f%% of the best (%s, %s ops/s).\n", r.TolerancePct, r.Best, benchrun.FormatCount(r.BestIPS))
	}
	if r.ConnString != "" {
		fmt.Fprintf(w, "\nConnection string (put your password back in):\n  %s\n", r.ConnString)
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

// plural writes n and the noun, with an s unless n is 1.
func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
