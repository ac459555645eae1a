package main

import (
	"fmt"
	"math"
	"slices"
	"strings"

	"github.com/shoalpool/shoal/bench/internal/mdtable"
)

// roundsSummary writes, for a run of several rounds, a table per load of
// each round's throughput and the etcd contender's ratios with their
// median and spread, then the targets judged on the medians: one run's
// ratio on the shared machine is too rough a sample to judge them on.
func roundsSummary(b *strings.Builder, cfg config, cells []cell, rounds int) {
	fmt.Fprintf(b, "#### Over the %d rounds\n\n", rounds)
	b.WriteString("Per load, each round's throughput and the etcd contender's ratios, their median and their spread " +
		"(least to most), each column's on its own: a ratio's median is the median of the rounds' ratios, not the ratio of " +
		"the q/s medians. The ratio targets are judged on the medians; the errors and connections at the server on every " +
		"round, so that one round with an error or above the budget misses it.\n\n")
	var judged []judgement
	for _, load := range cfg.loads {
		j, ok := judge(cells, load, cfg.budget)
		if len(j.rounds) == 0 {
			continue
		}
		if ok {
			judged = append(judged, j)
			fmt.Fprintf(b, "%s (targets: etcd / static %.1fx, etcd / pgbouncer %.1fx):\n\n", load, staticTarget(load), bouncerTarget)
		} else {
			fmt.Fprintf(b, "%s:\n\n", load)
		}
		loadRounds(b, cfg, j, ok)
	}
	if len(judged) == 0 {
		return
	}
	fmt.Fprintf(b, "The etcd contender against the targets (the medians of %d rounds, with the least and most in parentheses):\n\n", rounds)
	mdtable.Header(b, "load", "errors and connections at the server", "etcd / static", "etcd / pgbouncer")
	for _, j := range judged {
		fmt.Fprintf(b, "| %s | %s | %s | %s |\n", j.load, safetyVerdict(j),
			ratioVerdict(j.vsStatic, staticTarget(j.load), j.staticMet()), ratioVerdict(j.vsBouncer, bouncerTarget, j.bouncerMet()))
	}
	b.WriteString("\n")
}

// loadRounds writes one load's table: a row per round, then the median and
// the spread of every column. withEtcd adds the ratios and etcd's errors
// and connections.
func loadRounds(b *strings.Builder, cfg config, j judgement, withEtcd bool) {
	cols := []string{"round", "order"}
	for _, c := range cfg.contenders {
		cols = append(cols, c+" q/s")
	}
	if withEtcd {
		cols = append(cols, "etcd / static", "etcd / pgbouncer", "etcd's errors and connections at the server")
	}
	mdtable.Header(b, cols...)
	qps := make([][]float64, len(cfg.contenders))
	for _, r := range j.rounds {
		row := []string{fmt.Sprint(r.round), strings.Join(r.order, ", ")}
		for i, c := range cfg.contenders {
			q, ok := r.qps[c]
			if !ok {
				q = math.NaN()
			}
			qps[i] = append(qps[i], q)
			row = append(row, figure(q, "%.0f"))
		}
		if withEtcd {
			safety := "-"
			if r.etcd {
				safety = fmt.Sprintf("%d errors, at most %d of %d: %s", r.errors, r.most, j.budget, met(r.safe))
			}
			row = append(row, figure(r.vsStatic, "%.2fx"), figure(r.vsBouncer, "%.2fx"), safety)
		}
		fmt.Fprintf(b, "| %s |\n", strings.Join(row, " | "))
	}
	medians, spreads := []string{"median", ""}, []string{"spread", ""}
	for _, q := range qps {
		s := spreadOf(q)
		medians, spreads = append(medians, figure(s.median, "%.0f")), append(spreads, span(s, "%.0f"))
	}
	if withEtcd {
		medians = append(medians, figure(j.vsStatic.median, "%.2fx"), figure(j.vsBouncer.median, "%.2fx"), "")
		spreads = append(spreads, span(j.vsStatic, "%.2fx"), span(j.vsBouncer, "%.2fx"), "")
	}
	fmt.Fprintf(b, "| %s |\n| %s |\n\n", strings.Join(medians, " | "), strings.Join(spreads, " | "))
}

// safetyVerdict is a load's errors and connections target over its rounds:
// met if every round that ran etcd had no error and stayed within the
// budget, else the rounds that did not.
func safetyVerdict(j judgement) string {
	if j.safe() {
		most := 0
		for _, r := range j.rounds {
			most = max(most, r.most)
		}
		return fmt.Sprintf("0 errors and at most %d of %d in every round: met", most, j.budget)
	}
	var bad []string
	for _, r := range j.rounds {
		if slices.Contains(j.unsafe, r.round) {
			bad = append(bad, fmt.Sprintf("round %d, %d errors, at most %d of %d", r.round, r.errors, r.most, j.budget))
		}
	}
	return strings.Join(bad, "; ") + ": missed"
}

// ratioVerdict is one ratio target judged on the median of the rounds.
func ratioVerdict(s spread, want float64, ok bool) string {
	if s.n == 0 {
		return "-"
	}
	return fmt.Sprintf("%.2fx (%s, %d rounds; target %.1fx): %s", s.median, span(s, "%.2fx"), s.n, want, met(ok))
}

// figure formats x, or "-" for NaN (not measured).
func figure(x float64, format string) string {
	if math.IsNaN(x) {
		return "-"
	}
	return fmt.Sprintf(format, x)
}

// span formats a spread's least and most, "-" if nothing was measured.
func span(s spread, format string) string {
	if s.n == 0 {
		return "-"
	}
	return fmt.Sprintf(format+"–"+format, s.lo, s.hi)
}
