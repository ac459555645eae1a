package benchrun

import (
	"cmp"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"time"

	"gonum.org/v1/gonum/stat"
)

// caseWord is what the report calls what it measured, one at a time: a
// case of bench, a configuration of a sweep.
func (r *Report) caseWord() string {
	if r.Command == "sweep" {
		return "configuration"
	}
	return "case"
}

// WriteHeader prints the machine and the run's configuration, as Benchee
// does before its first table.
func WriteHeader(w io.Writer, r *Report, estimated time.Duration) {
	m := r.Machine
	fmt.Fprintf(w, "Operating System: %s\n", m.OS)
	fmt.Fprintf(w, "CPU Information: %s\n", m.CPU)
	fmt.Fprintf(w, "Number of Available Cores: %d\n", m.Cores)
	fmt.Fprintf(w, "Available memory: %s\n", m.Memory)
	fmt.Fprintf(w, "%s\n\n", m.GoVersion)
	fmt.Fprintf(w, "Benchmark suite executing with the following configuration:\n")
	fmt.Fprintf(w, "target: %s\n", r.Target)
	what, round := r.caseWord(), ""
	if r.Rounds > 1 {
		round = " and round"
	}
	fmt.Fprintf(w, "warmup: %s per %s%s, longer until every worker has finished an operation; not counted\n", formatSetting(r.Warmup), what, round)
	fmt.Fprintf(w, "time: %s measured per %s%s\n", formatSetting(r.Duration), what, round)
	if r.Rounds > 1 {
		fmt.Fprintf(w, "rounds: %d (every %s once a round, the order reversed each round)\n", r.Rounds, what)
	}
	fmt.Fprintf(w, "Estimated total run time: %s\n", formatSetting(estimated.Round(time.Second)))
}

// WriteScenarioTitle prints the heading of a scenario.
func WriteScenarioTitle(w io.Writer, s *ScenarioResult) {
	fmt.Fprintf(w, "\n## %s: %s\n", s.Name, s.Description)
	if s.Server != "" {
		fmt.Fprintf(w, "server: %s\n", s.Server)
	}
	if s.Skipped != "" {
		fmt.Fprintf(w, "%s: skipped — %s\n", s.Name, s.Skipped)
	}
}

// Ranked returns g's measured results, fastest first: the order of the
// tables, the chart and the verdict.
func (g *GroupResult) Ranked() []Result {
	var measured []Result
	for _, r := range g.Results {
		if r.Measured() {
			measured = append(measured, r)
		}
	}
	slices.SortStableFunc(measured, func(a, b Result) int { return cmp.Compare(b.IPS, a.IPS) })
	return measured
}

// WriteGroup prints a group's table, its comparison block and the
// connections and acquire waits of its cases, each with a legend that
// says what its columns count, and a line for every case that was
// skipped or failed. r gives the run's settings for the legends.
func WriteGroup(w io.Writer, r *Report, scenario string, g *GroupResult) {
	measured := g.Ranked()
	title := g.Title
	if len(measured) > 1 {
		title += " (fastest first)"
	}
	fmt.Fprintf(w, "\n%s\n", title)
	if len(measured) > 0 {
		writeTable(w, r, g.Workers, measured)
		writeComparison(w, measured)
		writeConns(w, r, measured)
	}
	for _, res := range g.Results {
		switch res.Status {
		case StatusSkipped:
			fmt.Fprintf(w, "%s: skipped — %s\n", scenario, res.Reason)
		case StatusFailed:
			fmt.Fprintf(w, "%s/%s: FAILED — %s\n", scenario, res.Name, res.Reason)
		case StatusInterrupted:
			fmt.Fprintf(w, "%s/%s: interrupted — %s\n", scenario, res.Name, res.Reason)
		}
	}
}

// latencyUnit is the one unit of a table's latency columns, so that mean,
// p50 and p99 compare at a glance.
func latencyUnit(rs []Result) durationUnit {
	var all []float64
	for _, r := range rs {
		all = append(all, float64(r.Latency.Mean), float64(r.Latency.Median), float64(r.Latency.P99))
	}
	return columnUnit(all)
}

// Spread returns how much r's throughput varied, as the standard
// deviation over the mean: across its rounds when it has several, else
// across the slices of its window; and whether it could tell.
func (r *Result) Spread() (float64, bool) {
	xs := r.SliceIPS
	if len(r.RoundIPS) >= 2 {
		xs = r.RoundIPS
	}
	if len(xs) < 2 {
		return 0, false
	}
	mean, sd := stat.MeanStdDev(xs, nil)
	if mean <= 0 {
		return 0, false
	}
	return sd / mean, true
}

func writeTable(w io.Writer, r *Report, workers int, rs []Result) {
	unit := latencyUnit(rs)
	g := grid{}
	g.add("Name", "ops/s", "spread", "mean ("+unit.name+")", "p50 ("+unit.name+")", "p99 ("+unit.name+")")
	for _, res := range rs {
		spread := "-"
		if s, ok := res.Spread(); ok {
			spread = fmt.Sprintf("±%.0f%%", math.Round(s*100))
		}
		l := res.Latency
		g.add(res.Name, FormatOps(res.IPS), spread, unit.in(float64(l.Mean)), unit.in(float64(l.Median)), unit.in(float64(l.P99)))
	}
	g.write(w)
	writeLegend(w, tableLegend(r, workers, rs)...)
}

// tableLegend says what the main table's columns count.
func tableLegend(r *Report, workers int, rs []Result) []string {
	window := windowOf(r, rs)
	warm := "after a warm-up of " + formatSetting(r.Warmup) + " and an operation per worker (not counted)"
	if r.Warmup == 0 {
		warm = "with no warm-up"
	}
	who := "all " + Plural(workers, "worker")
	if workers == 1 {
		who = "1 worker"
	}
	ops := fmt.Sprintf("ops/s: operations per second by %s in the %s measured window, %s;", who, window, warm)
	spread := "spread: standard deviation / mean of ops/s over the window's 10 slices."
	lat := "mean, p50, p99: time per operation (p50: half took longer; p99: 1 in 100 did), percentiles because a ± on skewed latencies says little."
	if rounds := roundsOf(rs); rounds > 1 {
		ops = fmt.Sprintf("ops/s: operations per second by %s, the mean of %d rounds, each a %s measured window %s;", who, rounds, window, warm)
		spread = "spread: standard deviation / mean of ops/s over the rounds."
		lat = "mean, p50, p99: time per operation in the median round (p50: half took longer; p99: 1 in 100 did), percentiles because a ± on skewed latencies says little."
	}
	return []string{ops, spread, lat}
}

// windowOf is the measured window per case, from the report's settings or
// else the results'.
func windowOf(r *Report, rs []Result) string {
	if r.Duration == 0 && len(rs) > 0 {
		return formatSetting(rs[0].Window)
	}
	return formatSetting(r.Duration)
}

// roundsOf is how many rounds the results were measured in: 1 outside a
// sweep or a bench with --rounds.
func roundsOf(rs []Result) int {
	n := 1
	for _, r := range rs {
		n = max(n, len(r.RoundIPS))
	}
	return n
}

// writeComparison prints each case against the fastest: how many times
// slower, how much longer per operation that means, and whether that is
// beyond the noise.
func writeComparison(w io.Writer, rs []Result) {
	if len(rs) < 2 {
		return
	}
	j := JudgeGroup(rs)
	best := rs[0]
	fmt.Fprintf(w, "\nComparison, each against the fastest:\n")
	g := grid{align: "lrll"}
	g.add(best.Name, FormatOps(best.IPS)+" ops/s", "", "")
	var whys []string
	judged := 0
	for i, r := range rs[1:] {
		c := j.VsFastest[i+1]
		ratio := "∞"
		if r.IPS > 0 {
			ratio = FormatRatio(best.IPS / r.IPS)
		}
		noise := "within the noise"
		switch {
		case !c.Judged:
			noise = "noise not judged"
			if !slices.Contains(whys, c.Why) {
				whys = append(whys, c.Why)
			}
		case c.Better():
			noise = "beyond the noise"
		}
		if c.Judged {
			judged++
			noise += fmt.Sprintf(" (%s to %s)", FormatBound(c.Low), FormatBound(c.High))
		}
		slower := ratio + " slower"
		if r.IPS > 0 && best.IPS > 0 {
			slower += " (" + perOp(opTime(r)-opTime(best)) + ")"
		}
		g.add(r.Name, FormatOps(r.IPS)+" ops/s", slower, noise)
	}
	g.write(w)
	basis := "judged on the spread of each case's slices (not on load changes between cases: --rounds catches those)"
	if roundsOf(rs) > 1 {
		basis = "judged round by round"
	}
	legend := []string{"Nx slower: the fastest's ops/s over this one's; per op: the longer time per operation that means (workers / ops/s, less the fastest's)."}
	if judged > 0 {
		level := "95%"
		if len(rs) > 2 {
			level = fmt.Sprintf("%s each, 95%% over %d comparisons", FormatLevel(j.Level), len(rs)-1)
		}
		legend = append(legend, fmt.Sprintf("Beyond the noise: the ratio's interval (%s) excludes 1x, %s.", level, basis))
	}
	for _, why := range whys {
		legend = append(legend, "Not judged: "+why+".")
	}
	writeLegend(w, legend...)
}

// opTime is the time per operation r's throughput means for one of its
// workers (workers / ops/s): the comparison's per-op difference comes from
// it, so that it grows with the ratio beside it. The mean latency cannot
// serve: it times the operation alone (and with rounds, in the median
// round), so a case slower by ops/s may have the lower mean.
func opTime(r Result) time.Duration {
	return time.Duration(float64(max(r.Workers, 1)) / r.IPS * float64(time.Second))
}

// perOp writes a difference in time per operation in its own unit:
// "+4.51 ms per op", "-120 ns per op".
func perOp(d time.Duration) string {
	sign := "+"
	if d < 0 {
		sign, d = "-", -d
	}
	return sign + FormatDuration(d) + " per op"
}

// FormatBound writes a bound of a ratio's interval, and the bounds of a
// wide one as "<0.01x" and ">100x" rather than digits nobody reads.
func FormatBound(r float64) string {
	switch {
	case r > 100:
		return ">100x"
	case r < 0.01:
		return "<0.01x"
	}
	return FormatRatio(r)
}

// FormatLevel writes a confidence level as a percentage, with the digits
// that tell 99.6% from 99.5%.
func FormatLevel(level float64) string {
	return strings.TrimSuffix(strings.TrimRight(fmt.Sprintf("%.2f", level*100), "0"), ".") + "%"
}

// Plural writes n and the noun, with an s unless n is 1.
func Plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}

// writeConns prints the connections each case opened and, for pooled
// cases, the percentiles of its acquire wait.
func writeConns(w io.Writer, r *Report, rs []Result) {
	var shown []Result
	var waits []float64
	for _, res := range rs {
		if res.AcquireWait != nil || res.ConnsOpened != nil {
			shown = append(shown, res)
		}
		if a := res.AcquireWait; a != nil {
			waits = append(waits, float64(a.P50), float64(a.P99), float64(a.P999))
		}
	}
	if len(shown) == 0 {
		return
	}
	unit := columnUnit(waits)
	fmt.Fprintf(w, "\nConnections and acquire wait:\n")
	g := grid{}
	g.add("Name", "opened", "while measured", "wait p50 ("+unit.name+")", "wait p99 ("+unit.name+")", "wait p99.9 ("+unit.name+")")
	for _, res := range shown {
		total, during := "-", "-"
		if res.ConnsOpenedTotal != nil {
			total = FormatInt(*res.ConnsOpenedTotal)
		}
		if res.ConnsOpened != nil {
			during = FormatInt(*res.ConnsOpened)
		}
		p50, p99, p999 := "-", "-", "-"
		if a := res.AcquireWait; a != nil {
			p50, p99, p999 = unit.in(float64(a.P50)), unit.in(float64(a.P99)), unit.in(float64(a.P999))
		}
		g.add(res.Name, total, during, p50, p99, p999)
	}
	g.write(w)
	window := windowOf(r, shown)
	opened := "opened: connections opened since the case began, setup and warm-up included; while measured: in the " + window + " window only."
	waitsIn := "wait: time an operation waited for a connection in the window"
	if rounds := roundsOf(shown); rounds > 1 {
		opened = fmt.Sprintf("opened: connections opened over the %d rounds, setups and warm-ups included; while measured: in their %s windows only.", rounds, window)
		waitsIn = "wait: time an operation waited for a connection in the median round's window"
	}
	writeLegend(w, opened, waitsIn+" (the pool's observer, or the case's own timing); -: no pool.")
}

// formatSetting prints a configured duration as Benchee prints its
// settings: "2 s", "500 ms", without trailing zeros.
func formatSetting(d time.Duration) string {
	s := FormatDuration(d)
	num, unit, _ := strings.Cut(s, " ")
	if strings.Contains(num, ".") {
		num = strings.TrimRight(strings.TrimRight(num, "0"), ".")
	}
	return num + " " + unit
}
