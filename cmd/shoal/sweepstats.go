package main

import (
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// sweepAlpha is the sweep's error rate: the chance, over the whole sweep,
// of calling a configuration better than the default when it is not. It
// is shared out over the comparisons (Bonferroni), since a sweep of a
// dozen configurations compared at 5% each would find a "winner" in
// plain noise about half the time.
const sweepAlpha = 0.05

// configRounds is one configuration's throughput, one number per round.
// Rounds are aligned: ips[r] of every configuration was measured in round
// r, close in time, under the same load from the rest of the machine.
type configRounds struct {
	name string
	ips  []float64
}

// meanCI is a configuration's mean throughput and the half-width of its
// 95% confidence interval, for the table: how far apart the rounds were.
func meanCI(ips []float64) (mean, half float64) {
	if len(ips) < 2 {
		return stat.Mean(ips, nil), math.Inf(1)
	}
	mean, sd := stat.MeanStdDev(ips, nil)
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(ips) - 1)}
	return mean, t.Quantile(0.975) * sd / math.Sqrt(float64(len(ips)))
}

// verdict is what the rounds say.
type verdict struct {
	// VsDefault compares each configuration with the default one (the
	// default's own entry is the identity).
	VsDefault []benchrun.Comparison
	// Pick is the configuration to recommend, or -1: none is
	// significantly faster than the default, so keep it.
	Pick int
	// Best is the fastest configuration that is significantly faster than
	// the default, or -1.
	Best int
	// Level is the confidence of each comparison after sharing sweepAlpha
	// out over them, such as 0.9958 for twelve.
	Level float64
	def   int // the default's index
}

// decide compares every configuration with configs[def], the default, and
// recommends the smallest one (less(i, j): i is smaller than j) that is
// significantly faster than the default and not significantly slower than
// the fastest such.
func decide(configs []configRounds, def int, less func(i, j int) bool) verdict {
	k := max(len(configs)-1, 1)
	alpha := sweepAlpha / float64(k)
	v := verdict{Pick: -1, Best: -1, Level: 1 - alpha, def: def, VsDefault: make([]benchrun.Comparison, len(configs))}
	for i, c := range configs {
		if i == def {
			v.VsDefault[i] = benchrun.Comparison{Ratio: 1, Low: 1, High: 1, P: 1, Judged: true, Rounds: true}
			continue
		}
		v.VsDefault[i] = benchrun.CompareRounds(c.ips, configs[def].ips, alpha)
		if v.VsDefault[i].Better() && (v.Best < 0 || v.VsDefault[i].Ratio > v.VsDefault[v.Best].Ratio) {
			v.Best = i
		}
	}
	if v.Best < 0 {
		return v
	}
	for i, c := range configs {
		if i == def || !v.VsDefault[i].Better() {
			continue
		}
		if i != v.Best && benchrun.CompareRounds(c.ips, configs[v.Best].ips, alpha).Worse() {
			continue
		}
		if v.Pick < 0 || less(i, v.Pick) {
			v.Pick = i
		}
	}
	return v
}
