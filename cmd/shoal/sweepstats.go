package main

import (
	"math"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
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

// comparison is one configuration against another, round by round.
type comparison struct {
	// Ratio is the geometric mean over the rounds of a's throughput over
	// b's; Low and High bound it with the sweep's confidence.
	Ratio, Low, High float64
	// P is the two-sided p-value of "a and b are as fast".
	P float64
}

// better reports whether a is significantly faster than b.
func (c comparison) better() bool { return c.Low > 1 }

// worse reports whether a is significantly slower than b.
func (c comparison) worse() bool { return c.High < 1 }

// compareRounds is a paired t-test on the logarithm of the per-round
// ratios a/b, at the two-sided level alpha. Pairing by round takes out
// what a busy machine adds to both configurations of a round; the
// logarithm makes "1.2x faster" and "1.2x slower" the same distance.
func compareRounds(a, b []float64, alpha float64) comparison {
	n := min(len(a), len(b))
	d := make([]float64, 0, n)
	for i := range n {
		if a[i] > 0 && b[i] > 0 {
			d = append(d, math.Log(a[i]/b[i]))
		}
	}
	if len(d) < 2 {
		return comparison{Ratio: 1, Low: 0, High: math.Inf(1), P: 1}
	}
	mean, sd := stat.MeanStdDev(d, nil)
	se := sd / math.Sqrt(float64(len(d)))
	if se == 0 {
		// Every round gave the same ratio: certain, unless it is 1.
		p := 0.0
		if mean == 0 {
			p = 1
		}
		r := math.Exp(mean)
		return comparison{Ratio: r, Low: r, High: r, P: p}
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: float64(len(d) - 1)}
	q := t.Quantile(1 - alpha/2)
	return comparison{
		Ratio: math.Exp(mean),
		Low:   math.Exp(mean - q*se),
		High:  math.Exp(mean + q*se),
		P:     2 * t.CDF(-math.Abs(mean/se)),
	}
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
	VsDefault []comparison
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
	v := verdict{Pick: -1, Best: -1, Level: 1 - alpha, def: def, VsDefault: make([]comparison, len(configs))}
	for i, c := range configs {
		if i == def {
			v.VsDefault[i] = comparison{Ratio: 1, Low: 1, High: 1, P: 1}
			continue
		}
		v.VsDefault[i] = compareRounds(c.ips, configs[def].ips, alpha)
		if v.VsDefault[i].better() && (v.Best < 0 || v.VsDefault[i].Ratio > v.VsDefault[v.Best].Ratio) {
			v.Best = i
		}
	}
	if v.Best < 0 {
		return v
	}
	for i, c := range configs {
		if i == def || !v.VsDefault[i].better() {
			continue
		}
		if i != v.Best && compareRounds(c.ips, configs[v.Best].ips, alpha).worse() {
			continue
		}
		if v.Pick < 0 || less(i, v.Pick) {
			v.Pick = i
		}
	}
	return v
}
