package main

import (
	"strings"
	"testing"
	"time"
)

// The targets are judged on the median of each round's pair, not on the
// best rounds, and a cell missing a contender is left out.
func TestPipelineTargetsJudgeRoundPairs(t *testing.T) {
	r := &results{contenders: []contender{{name: "pgxpool-8"}, {name: "pgxpool-32"}, {name: "pipelined-8"}, {name: "pgbouncer-8"}}}
	r.rows = []row{{
		query: "SELECT 1", workers: 32,
		qps: []float64{100, 200, 400, 150},
		// Round by round pipelined-8 / pgxpool-32: 1.2, 1.6, 2.0 (median
		// 1.6, met) though the best rounds (400 / 200) say 2.0; against
		// pgbouncer-8: 0.9, 1.0, 1.1 (median 1.0, not above 1: missed).
		perRound: [][]float64{{100, 100, 100}, {200, 100, 150}, {240, 160, 300}, {266.67, 160, 272.73}},
		cpu:      make([]time.Duration, 4), p50: make([]float64, 4), p99: make([]float64, 4),
	}}
	md := r.pipelineMarkdown("cmd", "machine", 3, 0)
	reportHas(t, md,
		"| SELECT 1 | 32 | pgxpool-32 | 1.60x (1.20-2.00) | >= 1.50x | met |",
		"| SELECT 1 | 32 | pgxpool-8 | 2.40x (1.60-3.00) | >= 2.00x | met |",
		"| SELECT 1 | 32 | pgbouncer-8 | 1.00x (0.90-1.10) | > 1.00x | missed |",
		"2 targets met, 1 missed.",
	)
	if strings.Contains(md, "shoalpgx-8") {
		t.Errorf("report judges a contender that did not run:\n%s", md)
	}
	if strings.Contains(md, "ceiling") {
		t.Errorf("report has a ceiling column though %s did not run:\n%s", ceilingName, md)
	}
}

// Beside each target against a pool the report sets what the ceiling
// reached against the same pool, paired round by round, says when that
// falls short of the target too, and counts the missed targets it could
// not have met either; a target against another kind of contender gets
// no ceiling.
func TestPipelineTargetsShowTheCeiling(t *testing.T) {
	r := &results{contenders: []contender{{name: "pgxpool-8"}, {name: "pgxpool-32"}, {name: "pipelined-8"}, {name: "pgbouncer-8"}, {name: ceilingName}}}
	cell := func(workers int, qps []float64, perRound [][]float64) row {
		return row{query: "SELECT 1", workers: workers, qps: qps, perRound: perRound,
			cpu: make([]time.Duration, 5), p50: make([]float64, 5), p99: make([]float64, 5)}
	}
	r.rows = []row{
		// pipelined-8 / pgxpool-32: 1.0, 1.2, 1.4, missed; the ceiling
		// reaches 1.3 every round, short of 1.5 too. Against pgxpool-8
		// pipelined-8 meets 2.0 exactly, and the ceiling's median (2.6,
		// 1.3, 1.95) falls short of it.
		cell(32, []float64{100, 200, 210, 100, 260},
			[][]float64{{100, 100, 100}, {200, 100, 150}, {200, 120, 210}, {100, 100, 100}, {260, 130, 195}}),
		// pipelined-8 misses 2x pgxpool-8 where the ceiling makes 3x.
		cell(128, []float64{100, 100, 180, 100, 300},
			[][]float64{{100, 100, 100}, {100, 100, 100}, {180, 180, 180}, {100, 100, 100}, {300, 300, 300}}),
	}
	md := r.pipelineMarkdown("cmd", "machine", 3, 0)
	reportHas(t, md,
		"| query | workers | against | ratio (rounds' range) | target | verdict | the protocol's ceiling here |",
		"| SELECT 1 | 32 | pgxpool-32 | 1.20x (1.00-1.40) | >= 1.50x | missed | 1.30x (1.30-1.30), short of the target |",
		"| SELECT 1 | 32 | pgxpool-8 | 2.00x (1.20-2.10) | >= 2.00x | met | 1.95x (1.30-2.60), short of the target |",
		"| SELECT 1 | 32 | pgbouncer-8 | 2.00x (1.20-2.10) | > 1.00x | met | – |",
		"| SELECT 1 | 128 | pgxpool-32 | 1.80x (1.80-1.80) | >= 1.50x | met | 3.00x (3.00-3.00) |",
		"| SELECT 1 | 128 | pgxpool-8 | 1.80x (1.80-1.80) | >= 2.00x | missed | 3.00x (3.00-3.00) |",
		"4 targets met, 2 missed, 1 of them beyond the protocol's ceiling on this machine",
		"pgx-pipeline-8 q/s (of pgxpool-8)",
		"| SELECT 1 | 32 | 100 | 200 (2.00) | 210 (2.10) | 100 (1.00) | 260 (2.60) |",
		"it does not use the workers count",
	)
}

// With pgx-pipeline-4x8 in the run, the 32-worker targets are held
// against it, which keeps as many statements in flight as 32 workers can,
// and the other counts still against pgx-pipeline-8.
func TestPipelineTargetsAt32HeldAgainstThirtyTwoInFlight(t *testing.T) {
	r := &results{contenders: []contender{{name: "pgxpool-8"}, {name: "pipelined-8"}, {name: ceilingName}, {name: inFlight32Name}}}
	cell := func(workers int, perRound [][]float64) row {
		return row{query: "pk lookup", workers: workers, qps: []float64{100, 150, 300, 220}, perRound: perRound,
			cpu: make([]time.Duration, 4), p50: make([]float64, 4), p99: make([]float64, 4)}
	}
	r.rows = []row{
		// pipelined-8 makes 1.5x pgxpool-8 and misses; pgx-pipeline-8
		// would make 3x, but 32 in flight make 1.8x, short of 2x too.
		cell(32, [][]float64{{100, 100, 100}, {150, 150, 150}, {300, 300, 300}, {180, 180, 180}}),
		// At 128 the 4x8 column does not count: pgx-pipeline-8's 3x does.
		cell(128, [][]float64{{100, 100, 100}, {150, 150, 150}, {300, 300, 300}, {120, 120, 120}}),
	}
	md := r.pipelineMarkdown("cmd", "machine", 3, 0)
	reportHas(t, md,
		"| pk lookup | 32 | pgxpool-8 | 1.50x (1.50-1.50) | >= 2.00x | missed | 1.80x (1.80-1.80), short of the target |",
		"| pk lookup | 128 | pgxpool-8 | 1.50x (1.50-1.50) | >= 2.00x | missed | 3.00x (3.00-3.00) |",
		"0 targets met, 2 missed, 1 of them beyond the protocol's ceiling on this machine (pgx-pipeline-8 fell short of them too; at 32 workers, pgx-pipeline-4x8)",
		"pgx-pipeline-4x8 is the same on 4 connections",
		"(at 32 workers, pgx-pipeline-4x8)",
	)
}

// reportHas fails t for each of wants that md does not contain.
func reportHas(t *testing.T, md string, wants ...string) {
	t.Helper()
	for _, want := range wants {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}

// The CPU table gives each cell's user part in brackets, and only the
// total where the user part was not measured (a report built from older
// results).
func TestPipelineCPUShowsTheUserPart(t *testing.T) {
	r := &results{contenders: []contender{{name: "pgxpool-8"}, {name: "pipelined-8"}}}
	r.rows = []row{{
		query: "SELECT 1", workers: 32, qps: []float64{100, 200},
		perRound: [][]float64{{100}, {200}},
		cpu:      []time.Duration{18200 * time.Nanosecond, 6600 * time.Nanosecond},
		user:     []time.Duration{5100 * time.Nanosecond, 3700 * time.Nanosecond},
		p50:      make([]float64, 2), p99: make([]float64, 2),
	}}
	reportHas(t, r.pipelineMarkdown("cmd", "machine", 1, 0), "| SELECT 1 | 32 | 18.2 µs (5.1) | 6.6 µs (3.7) |")
	r.rows[0].user = nil
	reportHas(t, r.pipelineMarkdown("cmd", "machine", 1, 0), "| SELECT 1 | 32 | 18.2 µs | 6.6 µs |")
}
