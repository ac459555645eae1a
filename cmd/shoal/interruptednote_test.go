package main

import (
	"bytes"
	"context"
	"io"
	"strings"
	"testing"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// TestInterruptedWithNothingMeasured: a bench that Ctrl-C ended before any
// case finished says so, whatever its output, rather than pointing at
// results above that are not there.
func TestInterruptedWithNothingMeasured(t *testing.T) {
	for _, format := range []string{"tables", "--json", "--csv"} {
		t.Run(format, func(t *testing.T) {
			ctx, cancel := context.WithCancel(context.Background())
			cancel() // Ctrl-C before the first case
			args := append([]string{"bench", "--only", "churn"}, benchTimes...)
			if format != "tables" {
				args = append(args, format)
			}
			r := runShoalCtx(t, ctx, args...)
			r.wantCode(t, exitInterrupted)
			if !strings.Contains(r.stderr, "shoal bench: interrupted before anything was measured") || strings.Contains(r.stderr, "above") {
				t.Errorf("stderr does not say that nothing was measured:\n%s", r.stderr)
			}
		})
	}
}

// TestInterruptedSaysWhereTheResultsWent: after Ctrl-C, the results that
// finished are "above" only when they are tables that were written; JSON
// and CSV went to stdout, and a failed write left none.
func TestInterruptedSaysWhereTheResultsWent(t *testing.T) {
	for _, tc := range []struct {
		name   string
		o      options
		stdout func(*bytes.Buffer) *outputWriter
		want   string
	}{
		{"tables", options{command: "bench"}, writes, "shoal bench: interrupted; the results above are those that finished"},
		{"json", options{command: "bench", json: true}, writes, "shoal bench: interrupted; the JSON on stdout holds the results that finished"},
		{"csv", options{command: "sweep", csv: true}, writes, "shoal sweep: interrupted; the CSV on stdout holds the results that finished"},
		{"tables not written", options{command: "bench"}, fails, "shoal bench: interrupted; the results that finished could not be written"},
		{"json not written", options{command: "bench", json: true}, fails, "shoal bench: interrupted; the results that finished could not be written"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			report := &benchrun.Report{Command: tc.o.command, Interrupted: true, Scenarios: []benchrun.ScenarioResult{{
				Name: "churn",
				Groups: []benchrun.GroupResult{{Title: "1 worker", Workers: 1, Results: []benchrun.Result{
					{Name: "finished", Status: benchrun.StatusOK, Ops: 10, IPS: 100, Rounds: 1},
				}}},
			}}}
			var stdout, stderr bytes.Buffer
			if code := finish(&tc.o, report, tc.stdout(&stdout), &stderr); code != exitInterrupted {
				t.Errorf("exit status %d, want %d", code, exitInterrupted)
			}
			if !strings.Contains(stderr.String(), tc.want) {
				t.Errorf("stderr lacks %q:\n%s", tc.want, stderr.String())
			}
		})
	}
}

// writes is a stdout that takes every write.
func writes(b *bytes.Buffer) *outputWriter { return &outputWriter{w: b} }

// fails is a stdout on a full disk, on which the tables of the finished
// results already failed to go out.
func fails(*bytes.Buffer) *outputWriter {
	out := &outputWriter{w: fullDisk{}}
	_, _ = io.WriteString(out, "the finished results\n")
	return out
}
