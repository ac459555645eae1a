package main

import (
	"math"
	"slices"

	"github.com/shoalpool/shoal/bench/internal/median"
)

// roundOrder is the order the contenders run in round r (from 1): as given
// in odd rounds, reversed in even ones. A cell can be helped or hurt by the
// one before it (a closed pool's backends still exiting, a machine warmed
// or loaded by it), so of any two contenders each runs before the other
// in half the rounds (the first listed in one more when the count is odd).
func roundOrder(contenders []string, r int) []string {
	out := slices.Clone(contenders)
	if r%2 == 0 {
		slices.Reverse(out)
	}
	return out
}

// byRound splits cells, in the order they ran, into their rounds, first
// round first; a round's cells keep their order.
func byRound(cells []cell) [][]cell {
	var rounds []int
	for _, c := range cells {
		if !slices.Contains(rounds, c.round) {
			rounds = append(rounds, c.round)
		}
	}
	slices.Sort(rounds)
	out := make([][]cell, len(rounds))
	for _, c := range cells {
		i := slices.Index(rounds, c.round)
		out[i] = append(out[i], c)
	}
	return out
}

// spread is a figure over the rounds that measured it: how many did, and
// the median, least and most of their values.
type spread struct {
	n              int
	median, lo, hi float64
}

// spreadOf sums up xs, leaving out NaN (a round that did not measure the
// figure).
func spreadOf(xs []float64) spread {
	var v []float64
	for _, x := range xs {
		if !math.IsNaN(x) {
			v = append(v, x)
		}
	}
	if len(v) == 0 {
		return spread{median: math.NaN(), lo: math.NaN(), hi: math.NaN()}
	}
	return spread{n: len(v), lo: slices.Min(v), hi: slices.Max(v), median: median.Of(v)}
}
