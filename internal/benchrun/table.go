package benchrun

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"
)

// Column widths of Benchee's console formatter, so that the tables line up
// the way the ones in the pull requests shoal grew from do.
const (
	ipsWidth        = 13
	averageWidth    = 15
	deviationWidth  = 11
	medianWidth     = 15
	percentileWidth = 15
)

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
	fmt.Fprintf(w, "warmup: %s\n", formatSetting(r.Warmup))
	fmt.Fprintf(w, "time: %s\n", formatSetting(r.Duration))
	if r.Rounds > 0 {
		fmt.Fprintf(w, "rounds: %d (every configuration once a round, the order reversed each round)\n", r.Rounds)
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

// WriteGroup prints a group's table, its comparison block, the pools'
// acquire waits, and a line for every case that was skipped or failed.
func WriteGroup(w io.Writer, scenario string, g *GroupResult) {
	fmt.Fprintf(w, "\n%s\n", g.Title)
	var measured []Result
	for _, r := range g.Results {
		if r.Measured() {
			measured = append(measured, r)
		}
	}
	slices.SortStableFunc(measured, func(a, b Result) int { return cmp.Compare(b.IPS, a.IPS) })
	if len(measured) > 0 {
		writeTable(w, measured)
		writeComparison(w, measured)
		writeWaits(w, measured)
	}
	for _, r := range g.Results {
		switch r.Status {
		case StatusSkipped:
			fmt.Fprintf(w, "%s: skipped — %s\n", scenario, r.Reason)
		case StatusFailed:
			fmt.Fprintf(w, "%s/%s: FAILED — %s\n", scenario, r.Name, r.Reason)
		case StatusInterrupted:
			fmt.Fprintf(w, "%s/%s: interrupted — %s\n", scenario, r.Name, r.Reason)
		}
	}
}

func labelWidth(rs []Result) int {
	width := len("Name")
	for _, r := range rs {
		width = max(width, len(r.Name))
	}
	return width + 1
}

func column(rs []Result, f func(Result) float64) []float64 {
	out := make([]float64, len(rs))
	for i, r := range rs {
		out[i] = f(r)
	}
	return out
}

func writeTable(w io.Writer, rs []Result) {
	label := labelWidth(rs)
	mean := func(r Result) float64 { return float64(r.Latency.Mean) }
	median := func(r Result) float64 { return float64(r.Latency.Median) }
	p99 := func(r Result) float64 { return float64(r.Latency.P99) }
	ipsUnit := countColumnUnit(column(rs, func(r Result) float64 { return r.IPS }))
	meanUnit := durationColumnUnit(column(rs, mean))
	medianUnit := durationColumnUnit(column(rs, median))
	p99Unit := durationColumnUnit(column(rs, p99))

	fmt.Fprintf(w, "%-*s%*s%*s%*s%*s%*s\n", label, "Name",
		ipsWidth, "ips", averageWidth, "average", deviationWidth, "deviation",
		medianWidth, "median", percentileWidth, "99th %")
	for _, r := range rs {
		fmt.Fprintf(w, "%-*s%*s%*s%*s%*s%*s\n", label, r.Name,
			ipsWidth, ipsUnit.formatIn(r.IPS),
			averageWidth, meanUnit.formatIn(mean(r)),
			deviationWidth, fmt.Sprintf("±%.2f%%", r.Latency.DeviationPct),
			medianWidth, medianUnit.formatIn(median(r)),
			percentileWidth, p99Unit.formatIn(p99(r)))
	}
}

// writeComparison prints Benchee's comparison block: each case's ips, and
// for the slower ones how many times slower and how much longer on average.
func writeComparison(w io.Writer, rs []Result) {
	if len(rs) < 2 {
		return
	}
	label := labelWidth(rs)
	ipsUnit := countColumnUnit(column(rs, func(r Result) float64 { return r.IPS }))
	meanUnit := durationColumnUnit(column(rs, func(r Result) float64 { return float64(r.Latency.Mean) }))
	best := rs[0]
	fmt.Fprintf(w, "\nComparison:\n")
	fmt.Fprintf(w, "%-*s%*s\n", label, best.Name, ipsWidth, ipsUnit.formatIn(best.IPS))
	for _, r := range rs[1:] {
		ratio := 0.0
		if r.IPS > 0 {
			ratio = best.IPS / r.IPS
		}
		delta := float64(r.Latency.Mean - best.Latency.Mean)
		sign := "+"
		if delta < 0 {
			sign, delta = "-", -delta
		}
		fmt.Fprintf(w, "%-*s%*s - %.2fx slower %s%s\n", label, r.Name, ipsWidth, ipsUnit.formatIn(r.IPS),
			ratio, sign, meanUnit.formatIn(delta))
	}
}

// writeWaits prints, like Benchee's extended statistics, the acquire-wait
// percentiles and connections opened of the cases that have them.
func writeWaits(w io.Writer, rs []Result) {
	var pooled []Result
	for _, r := range rs {
		if r.AcquireWait != nil || r.ConnsOpened != nil {
			pooled = append(pooled, r)
		}
	}
	if len(pooled) == 0 {
		return
	}
	label := labelWidth(pooled)
	fmt.Fprintf(w, "\nConnections and acquire wait:\n")
	fmt.Fprintf(w, "%-*s%*s%*s%*s%*s\n", label, "Name", ipsWidth, "conns opened",
		averageWidth, "wait p50", averageWidth, "wait p99", averageWidth, "wait p99.9")
	for _, r := range pooled {
		conns := "-"
		if r.ConnsOpened != nil {
			conns = fmt.Sprint(*r.ConnsOpened)
		}
		p50, p99, p999 := "-", "-", "-"
		if a := r.AcquireWait; a != nil {
			p50, p99, p999 = FormatDuration(a.P50), FormatDuration(a.P99), FormatDuration(a.P999)
		}
		fmt.Fprintf(w, "%-*s%*s%*s%*s%*s\n", label, r.Name, ipsWidth, conns,
			averageWidth, p50, averageWidth, p99, averageWidth, p999)
	}
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
