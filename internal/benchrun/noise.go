package benchrun

import (
	"fmt"
	"math"
	"time"

	"gonum.org/v1/gonum/stat"
	"gonum.org/v1/gonum/stat/distuv"
)

// NoiseAlpha is the error rate of one table's comparisons together: the
// chance of calling some case faster than another when it is not. It is
// shared out over the table's comparisons (Bonferroni), as the sweep does.
const NoiseAlpha = 0.05

// minOpsToJudge is the fewest operations a case must complete in its
// window for the spread of its slices to mean anything.
const minOpsToJudge = 100

// Comparison is one result's throughput against another's.
type Comparison struct {
	// Ratio is a's throughput over b's; Low and High bound it at the
	// confidence the comparison was made with.
	Ratio, Low, High float64
	// P is the two-sided p-value of "a and b are as fast".
	P float64
	// Judged is false when there was too little to judge the noise by.
	Judged bool
	// Why says what was missing when Judged is false.
	Why string
	// Rounds reports whether the comparison rests on rounds (a paired
	// test) rather than on the slices of one window each.
	Rounds bool
}

// Better reports whether a is faster than b beyond the noise.
func (c Comparison) Better() bool { return c.Judged && c.Low > 1 }

// Worse reports whether a is slower than b beyond the noise.
func (c Comparison) Worse() bool { return c.Judged && c.High < 1 }

// CompareRounds is a paired t-test on the logarithm of the per-round
// ratios a/b, at the two-sided level alpha. Pairing by round takes out
// what a busy machine adds to both cases of a round; the logarithm makes
// "1.2x faster" and "1.2x slower" the same distance. Ratio is the
// geometric mean of the rounds' ratios.
func CompareRounds(a, b []float64, alpha float64) Comparison {
	n := min(len(a), len(b))
	d := make([]float64, 0, n)
	for i := range n {
		if a[i] > 0 && b[i] > 0 {
			d = append(d, math.Log(a[i]/b[i]))
		}
	}
	if len(d) < 2 {
		return Comparison{Ratio: 1, Low: 0, High: math.Inf(1), P: 1, Rounds: true,
			Why: "fewer than two rounds measured both"}
	}
	mean, sd := stat.MeanStdDev(d, nil)
	return interval(mean, sd/math.Sqrt(float64(len(d))), float64(len(d)-1), alpha, true)
}

// interval is the comparison whose log-ratio is mean with standard error
// se and df degrees of freedom.
func interval(mean, se, df, alpha float64, rounds bool) Comparison {
	r := math.Exp(mean)
	if se == 0 {
		// Every sample gave the same ratio: certain, unless it is 1.
		p := 0.0
		if mean == 0 {
			p = 1
		}
		return Comparison{Ratio: r, Low: r, High: r, P: p, Judged: true, Rounds: rounds}
	}
	t := distuv.StudentsT{Mu: 0, Sigma: 1, Nu: df}
	q := t.Quantile(1 - alpha/2)
	return Comparison{
		Ratio: r, Low: math.Exp(mean - q*se), High: math.Exp(mean + q*se),
		P: 2 * t.CDF(-math.Abs(mean/se)), Judged: true, Rounds: rounds,
	}
}

// Compare judges a's throughput against b's at the two-sided level alpha.
// With two or more rounds each it is CompareRounds; with one window each,
// a Welch t-test on the logarithm of their slices' throughputs, counting
// each window as no more independent slices than operations fit in it
// end to end (slices shorter than an operation share it, and would
// otherwise look steadier than they are). Either way the interval is
// centred on the ratio of a.IPS to b.IPS, the figures the table shows.
//
// Cases run one after another, so a change in the machine's load between
// them shows in slices only as far as it shows within each window; rounds,
// run in alternating order, catch it.
func Compare(a, b *Result, alpha float64) Comparison {
	var c Comparison
	if len(a.RoundIPS) >= 2 && len(b.RoundIPS) >= 2 {
		c = CompareRounds(a.RoundIPS, b.RoundIPS, alpha)
	} else {
		c = compareSlices(a, b, alpha)
	}
	if a.IPS > 0 && b.IPS > 0 && c.Judged {
		shift := a.IPS / b.IPS / c.Ratio
		c.Ratio, c.Low, c.High = c.Ratio*shift, c.Low*shift, c.High*shift
	}
	return c
}

// compareSlices is Compare on one window each.
func compareSlices(a, b *Result, alpha float64) Comparison {
	na, whyA := independentSlices(a)
	nb, whyB := independentSlices(b)
	if whyA != "" || whyB != "" {
		why := whyA
		if why == "" {
			why = whyB
		}
		return Comparison{Ratio: 1, Low: 0, High: math.Inf(1), P: 1, Why: why}
	}
	ma, va := logMeanVar(a.SliceIPS, a.Window)
	mb, vb := logMeanVar(b.SliceIPS, b.Window)
	ea, eb := va/na, vb/nb
	se := math.Sqrt(ea + eb)
	df := na + nb - 2
	if ea+eb > 0 {
		// Welch-Satterthwaite.
		df = (ea + eb) * (ea + eb) / (ea*ea/(na-1) + eb*eb/(nb-1))
	}
	return interval(ma-mb, se, df, alpha, false)
}

// independentSlices is how many independent samples r's slices count
// for, or why they cannot be judged by.
func independentSlices(r *Result) (float64, string) {
	n := float64(len(r.SliceIPS))
	switch {
	case n < 2:
		return 0, "no slices of the window recorded"
	case r.Ops < minOpsToJudge:
		return 0, fmt.Sprintf("%s completed %d operations, too few to see the noise in (a longer --duration)", r.Name, r.Ops)
	}
	if r.Window > 0 && r.Latency.Mean > 0 {
		n = min(n, float64(r.Window)/float64(r.Latency.Mean))
	}
	if n < 2 {
		return 0, fmt.Sprintf("%s's operations (%s) are too long for its %s window to show the noise (a longer --duration, or --rounds)",
			r.Name, FormatDuration(r.Latency.Mean), formatSetting(r.Window))
	}
	return n, ""
}

// logMeanVar returns the mean and sample variance of the logarithms of
// slice throughputs. A slice in which nothing ran counts as half an
// operation, so that one stall makes the spread wide, not infinite.
func logMeanVar(slices []float64, window time.Duration) (mean, variance float64) {
	floor := 0.5
	if window > 0 {
		floor = 0.5 / (window.Seconds() / float64(len(slices)))
	}
	logs := make([]float64, len(slices))
	for i, v := range slices {
		logs[i] = math.Log(max(v, floor))
	}
	return stat.MeanVariance(logs, nil)
}

// Judgement compares every case of a table with its fastest.
type Judgement struct {
	// VsFastest[i] is the fastest's throughput against case i's (the
	// fastest's own entry is the identity).
	VsFastest []Comparison
	// Level is the confidence of each comparison, 1 - NoiseAlpha/k for
	// k comparisons.
	Level float64
}

// JudgeGroup compares every measured result with the first, which the
// caller has made the fastest (WriteGroup's order).
func JudgeGroup(rs []Result) Judgement {
	k := max(len(rs)-1, 1)
	alpha := NoiseAlpha / float64(k)
	j := Judgement{VsFastest: make([]Comparison, len(rs)), Level: 1 - alpha}
	for i := range rs {
		if i == 0 {
			j.VsFastest[i] = Comparison{Ratio: 1, Low: 1, High: 1, P: 1, Judged: true}
			continue
		}
		j.VsFastest[i] = Compare(&rs[0], &rs[i], alpha)
	}
	return j
}
