package main

import (
	"cmp"
	"context"
	"fmt"
	"slices"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// Rounds of a sweep, and of a bench with --rounds. One measurement per
// configuration says little on a machine whose load changes from second
// to second (five such sweeps of one server named four different
// winners); several, close in time and in alternating order, give each
// configuration a spread to be judged by.
const (
	defaultSweepRounds = 5
	quickSweepRounds   = 3 // the fewest that give a spread with a t-test
)

// runRounds runs every case once per round, forward in even rounds and
// backward in odd ones, so that no case always runs first after the run
// starts or last on a machine that has warmed up. It returns each case's
// results in round order; after Ctrl-C, the rounds that finished. A case
// that failed is not run again: its row reports its first failure whatever
// later rounds do, and against a server that refuses connections each
// further try would only wait for the pool to give up. label names a case
// on the progress bar.
func runRounds(ctx context.Context, o *options, cases []benchrun.Case, workers, rounds int, progress *benchrun.Progress, label func(c benchrun.Case) string) [][]benchrun.Result {
	per := o.warmup + o.duration + setupAllowance
	settings := settingsFor(o)
	out := make([][]benchrun.Result, len(cases))
	failed := make([]bool, len(cases))
	for r := range rounds {
		for k := range cases {
			i := k
			if r%2 == 1 {
				i = len(cases) - 1 - k
			}
			if ctx.Err() != nil {
				return evenRounds(out)
			}
			if failed[i] {
				continue
			}
			planned := per
			if cases[i].Skip != "" {
				planned = 0
			}
			progress.Begin(fmt.Sprintf("round %d/%d: %s", r+1, rounds, label(cases[i])), planned)
			res := benchrun.RunCase(ctx, cases[i], workers, settings)
			failed[i] = res.Status != benchrun.StatusOK
			out[i] = append(out[i], res)
			progress.End()
		}
	}
	return evenRounds(out)
}

// evenRounds trims, after Ctrl-C, the results of the cases that finished
// more rounds than others to the rounds every one of them finished, and
// drops the round that was interrupted from a case that had finished
// those: rows of unequal rounds would not mean what the table's legend
// says ("the mean of 2 rounds", "judged round by round") for every row,
// nor count their connections over the same rounds. A case that failed,
// or finished no round, is left as it is, to say so.
func evenRounds(out [][]benchrun.Result) [][]benchrun.Result {
	okRounds := func(rs []benchrun.Result) int {
		n := 0
		for n < len(rs) && rs[n].Status == benchrun.StatusOK {
			n++
		}
		return n
	}
	common := -1
	for _, rs := range out {
		if n := okRounds(rs); n > 0 && !hasFailure(rs) && (common < 0 || n < common) {
			common = n
		}
	}
	if common < 0 {
		return out
	}
	for i, rs := range out {
		if okRounds(rs) >= common && !hasFailure(rs) {
			out[i] = rs[:common]
		}
	}
	return out
}

// hasFailure reports whether a case failed in any of its rounds.
func hasFailure(rs []benchrun.Result) bool {
	return slices.ContainsFunc(rs, func(r benchrun.Result) bool { return r.Status == benchrun.StatusFailed })
}

// mergeRounds makes one table row of a case's rounds: operations, errors,
// elapsed time and connections opened summed, IPS the mean of the rounds',
// RoundIPS each round's, and latency, acquire waits, slices and the window
// they divide those of the median round (percentiles of separate runs do
// not add up). The first failure,
// if any, is the row's.
func mergeRounds(rs []benchrun.Result) benchrun.Result {
	if len(rs) == 0 {
		return benchrun.Result{}
	}
	for _, r := range rs {
		if r.Status != benchrun.StatusOK {
			return r
		}
	}
	byIPS := slices.Clone(rs)
	slices.SortFunc(byIPS, func(a, b benchrun.Result) int { return cmp.Compare(a.IPS, b.IPS) })
	m := byIPS[len(byIPS)/2]
	m.Ops, m.Errors, m.Elapsed, m.IPS, m.RoundIPS, m.Rounds = 0, 0, 0, 0, nil, len(rs)
	var opened, total int64
	for _, r := range rs {
		m.Ops += r.Ops
		m.Errors += r.Errors
		m.Elapsed += r.Elapsed
		m.IPS += r.IPS / float64(len(rs))
		m.RoundIPS = append(m.RoundIPS, r.IPS)
		if r.ConnsOpened != nil {
			opened += *r.ConnsOpened
		}
		if r.ConnsOpenedTotal != nil {
			total += *r.ConnsOpenedTotal
		}
	}
	if m.ConnsOpened != nil {
		m.ConnsOpened = &opened
	}
	if m.ConnsOpenedTotal != nil {
		m.ConnsOpenedTotal = &total
	}
	return m
}
