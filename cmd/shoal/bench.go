package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"slices"
	"time"

	"github.com/shoalpool/shoal/internal/benchrun"
	"github.com/shoalpool/shoal/internal/embedded"
)

// setupAllowance is what the progress bar expects a case's set-up and
// tear-down to take.
const setupAllowance = 250 * time.Millisecond

// settingsFor turns the flags into the runner's bounds.
func settingsFor(o *options) benchrun.Settings {
	return benchrun.Settings{
		Warmup:       o.warmup,
		Duration:     o.duration,
		SetupTimeout: max(4*o.dialTimeout, 20*time.Second),
		OpTimeout:    o.dialTimeout + 10*time.Second,
	}
}

// plannedScenario is a scenario with its plan for this run.
type plannedScenario struct {
	scenario
	plan *plan
}

// runBench is `shoal bench`.
func runBench(ctx context.Context, o *options, stdout, stderr io.Writer) int {
	var t *target
	if o.target != "" {
		var err error
		if t, err = parseTarget(o.target); err != nil {
			fmt.Fprintf(stderr, "shoal bench: %s\n", redactRaw(err.Error()))
			return exitUsage
		}
	}
	out, errOut := &outputWriter{w: scrubWriter{stdout, t}}, scrubWriter{stderr, t}
	e := &env{target: t, workers: o.workers, dialTimeout: o.dialTimeout}
	report := &benchrun.Report{
		Command: "bench", Target: "embedded", Machine: benchrun.ThisMachine(),
		Date: time.Now(), Quick: o.quick,
		Warmup: o.warmup, Duration: o.duration,
	}
	if o.rounds > 1 {
		report.Rounds = o.rounds
	}
	if t != nil {
		report.Target = t.Redacted
		if err := probe(ctx, t, o.dialTimeout); err != nil {
			if interruptedEarly(ctx, "bench", errOut) {
				return exitInterrupted
			}
			fmt.Fprintf(errOut, "shoal bench: %v\n", err)
			return exitFailed
		}
	} else {
		servers, err := embedded.Start()
		if err != nil {
			fmt.Fprintf(errOut, "shoal bench: starting the embedded servers: %v\n", err)
			return exitFailed
		}
		defer servers.Close()
		e.servers = servers
	}

	var planned []plannedScenario
	for _, s := range allScenarios {
		if len(o.only) > 0 && !slices.Contains(o.only, s.name) {
			continue
		}
		p, err := s.plan(e)
		if err != nil {
			fmt.Fprintf(errOut, "shoal bench: %s: %v\n", s.name, err)
			return exitFailed
		}
		planned = append(planned, plannedScenario{s, p})
	}
	execute(ctx, o, report, planned, out, stderr)
	if !o.json && !o.csv && !report.Interrupted {
		writeVerdict(out, o, report, t)
	}
	return finish(o, report, out, errOut)
}

// estimate is the planned run time of the scenarios.
func estimate(o *options, planned []plannedScenario) time.Duration {
	var total time.Duration
	for _, ps := range planned {
		if ps.plan.skip != "" {
			continue
		}
		for _, g := range ps.plan.groups {
			for _, c := range g.Cases {
				if c.Skip == "" {
					total += time.Duration(o.rounds) * (o.warmup + o.duration + setupAllowance)
				}
			}
		}
	}
	return total
}

// execute runs the planned scenarios into report, printing each group's
// table as it finishes (unless --json or --csv). After Ctrl-C it stops and
// marks the report interrupted. rawStderr is where the progress bar goes,
// if it is a terminal.
func execute(ctx context.Context, o *options, report *benchrun.Report, planned []plannedScenario, out, rawStderr io.Writer) {
	estimated := estimate(o, planned)
	tables := !o.json && !o.csv
	var progress *benchrun.Progress
	if f, ok := rawStderr.(*os.File); ok {
		progress = benchrun.NewProgress(f, estimated)
	}
	if tables {
		benchrun.WriteHeader(out, report, estimated)
	}
	for _, ps := range planned {
		desc := ps.description
		if ps.plan.description != "" {
			desc = ps.plan.description
		}
		sr := benchrun.ScenarioResult{Name: ps.name, Description: desc, Server: ps.plan.server, Skipped: ps.plan.skip}
		if tables {
			progress.Pause(func() { benchrun.WriteScenarioTitle(out, &sr) })
		}
		for _, g := range ps.plan.groups {
			if ctx.Err() != nil {
				break
			}
			gr := benchrun.GroupResult{Title: g.Title, Workers: g.Workers}
			label := func(c benchrun.Case) string { return ps.name + "/" + c.Name + " (" + g.Title + ")" }
			for _, rs := range runRounds(ctx, o, g.Cases, g.Workers, o.rounds, progress, label) {
				switch {
				case len(rs) == 1:
					gr.Results = append(gr.Results, rs[0])
				case len(rs) > 1:
					gr.Results = append(gr.Results, mergeRounds(rs))
				}
			}
			sr.Groups = append(sr.Groups, gr)
			if tables {
				progress.Pause(func() { benchrun.WriteGroup(out, report, ps.name, &gr) })
			}
		}
		report.Scenarios = append(report.Scenarios, sr)
		if ctx.Err() != nil {
			break
		}
	}
	progress.Stop()
	report.Interrupted = ctx.Err() != nil
}

// finish writes the machine-readable output and the chart and picks the
// exit status: 130 after Ctrl-C, 1 when a case failed or the results
// could not be written, else 0.
func finish(o *options, report *benchrun.Report, out *outputWriter, errOut io.Writer) int {
	code := exitOK
	if report.Failed() {
		code = exitFailed
	}
	switch {
	case o.json:
		if err := benchrun.WriteJSON(out, report); err != nil {
			fmt.Fprintf(errOut, "shoal %s: writing JSON: %v\n", o.command, err)
			code = exitFailed
		}
	case o.csv:
		if err := benchrun.WriteCSV(out, report); err != nil {
			fmt.Fprintf(errOut, "shoal %s: writing CSV: %v\n", o.command, err)
			code = exitFailed
		}
	}
	if out.err != nil && !o.json && !o.csv {
		fmt.Fprintf(errOut, "shoal %s: writing the results: %v\n", o.command, out.err)
		code = exitFailed
	}
	if o.chart != "" {
		// After Ctrl-C too: the chart holds what finished, as the tables do.
		if err := benchrun.WriteChartFile(o.chart, report); err != nil {
			fmt.Fprintf(errOut, "shoal %s: %v\n", o.command, err)
			code = exitFailed
		} else {
			// On stderr, with the other notes: stdout holds the results
			// only, whether tables sent to a file or JSON and CSV that
			// must stay parseable.
			fmt.Fprintf(errOut, "Chart written to %s\n", o.chart)
		}
	}
	if !report.Interrupted && !report.Measured() {
		why := "see the skipped lines above"
		if reasons := skipReasons(report); (o.json || o.csv) && reasons != "" {
			why = "skipped: " + reasons
		}
		if report.Failed() {
			why = "every case failed"
		}
		fmt.Fprintf(errOut, "shoal %s: nothing was measured; %s\n", o.command, why)
		code = exitFailed
	}
	if report.Failed() {
		which := "see the FAILED lines above"
		if o.json || o.csv {
			which = failReasons(report)
		}
		fmt.Fprintf(errOut, "shoal %s: some runs failed; %s\n", o.command, which)
	}
	if report.Interrupted {
		fmt.Fprintf(errOut, "shoal %s: %s\n", o.command, interruptedNote(o, report, out))
		return exitInterrupted
	}
	return code
}
