// Command ratios turns benchstat's CSV output for the core benchmarks into
// the Markdown summary of BENCHMARKS.md: each pool's median ns/op divided by
// shoal's, per scenario, and shoal's design targets with whether the run
// met them.
//
// It reads, on standard input, the output of
//
//	benchstat -format csv -col /pool -filter '.name:(AcquireRelease OR AcquireWait)' core.txt
//
// in which each table starts with two header rows (the pools, then the unit
// and statistic of every column) and each further row is a benchmark with
// its median per pool.
package main

import (
	"bufio"
	"encoding/csv"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// medians holds the medians by unit -> benchmark (base/scenario) -> pool -> value.
type medians struct {
	pools  []string // in the order benchstat gave them
	rows   []string // benchmark names in order of first appearance
	values map[string]map[string]map[string]float64
}

func main() {
	base := flag.String("base", "shoal", "the pool the others are divided by")
	flag.Parse()
	m, err := parse(os.Stdin)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ratios:", err)
		os.Exit(1)
	}
	w := bufio.NewWriter(os.Stdout)
	writeRatios(w, m, *base, "AcquireRelease", "sec/op", "ns/op", 1e9)
	writeTargets(w, m)
	writeWaits(w, m)
	writeWaited(w, m)
	w.Flush()
}

// parse reads benchstat's CSV. The header rows of a table have an empty
// first cell: the first names the pool of each column group, the second the
// unit (or "CI", "vs base", "P") of each column. Lines that are not CSV
// tables (the file-level configuration benchstat repeats above each table)
// have a single field and are skipped.
func parse(r io.Reader) (*medians, error) {
	m := &medians{values: map[string]map[string]map[string]float64{}}
	cr := csv.NewReader(r)
	cr.FieldsPerRecord = -1
	var groups []string // pool of each column of the current table
	var units []string  // unit of each column of the current table
	seenPool := map[string]bool{}
	seenRow := map[string]bool{}
	for {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, err
		}
		if len(rec) < 2 {
			continue
		}
		if rec[0] == "" {
			if groups == nil || units != nil {
				// First header row: carry each pool name right over its
				// columns.
				groups, units = make([]string, len(rec)), nil
				cur := ""
				for i, cell := range rec {
					if cell != "" {
						cur = cell
					}
					groups[i] = cur
				}
			} else {
				units = rec
			}
			continue
		}
		if units == nil {
			return nil, fmt.Errorf("row %q before the table's header rows", rec[0])
		}
		name := trimProcs(rec[0])
		if name == "geomean" {
			continue
		}
		for i := 1; i < len(rec) && i < len(units) && i < len(groups); i++ {
			unit, pool := units[i], groups[i]
			if pool == "" || unit == "" || unit == "CI" || unit == "vs base" || unit == "P" {
				continue
			}
			v, err := strconv.ParseFloat(rec[i], 64)
			if err != nil {
				continue // a missing cell
			}
			if m.values[unit] == nil {
				m.values[unit] = map[string]map[string]float64{}
			}
			if m.values[unit][name] == nil {
				m.values[unit][name] = map[string]float64{}
			}
			m.values[unit][name][pool] = v
			if !seenPool[pool] {
				seenPool[pool] = true
				m.pools = append(m.pools, pool)
			}
			if !seenRow[name] {
				seenRow[name] = true
				m.rows = append(m.rows, name)
			}
		}
	}
	if len(m.rows) == 0 {
		return nil, errors.New("no benchmark rows in the input")
	}
	return m, nil
}

// trimProcs drops the -GOMAXPROCS suffix of a benchmark name.
func trimProcs(name string) string {
	if i := strings.LastIndexByte(name, '-'); i > 0 {
		if _, err := strconv.Atoi(name[i+1:]); err == nil {
			return name[:i]
		}
	}
	return name
}

// scenarios lists the scenarios of bench, in order, with bench's name
// stripped.
func (m *medians) scenarios(bench string) []string {
	var out []string
	for _, row := range m.rows {
		if s, ok := strings.CutPrefix(row, bench+"/"); ok {
			out = append(out, s)
		}
	}
	return out
}

func (m *medians) get(unit, bench, scenario, pool string) (float64, bool) {
	v, ok := m.values[unit][bench+"/"+scenario][pool]
	return v, ok
}

// writeRatios writes one table: per scenario, base's absolute value and
// every pool's value divided by base's.
func writeRatios(w io.Writer, m *medians, base, bench, unit, label string, scale float64) {
	scenarios := m.scenarios(bench)
	if len(scenarios) == 0 || m.values[unit] == nil {
		return
	}
	fmt.Fprintf(w, "%s, median, as a multiple of %s's (higher is slower than %s):\n\n", label, base, base)
	fmt.Fprintf(w, "| scenario | %s (ns) |", base)
	for _, p := range m.pools {
		if p != base {
			fmt.Fprintf(w, " %s |", p)
		}
	}
	fmt.Fprint(w, "\n|---|---:|")
	for _, p := range m.pools {
		if p != base {
			fmt.Fprint(w, "---:|")
		}
	}
	fmt.Fprintln(w)
	for _, sc := range scenarios {
		b, ok := m.get(unit, bench, sc, base)
		fmt.Fprintf(w, "| %s | %s |", sc, number(b*scale, ok))
		for _, p := range m.pools {
			if p == base {
				continue
			}
			v, okv := m.get(unit, bench, sc, p)
			if !ok || !okv || b == 0 {
				fmt.Fprint(w, " – |")
				continue
			}
			fmt.Fprintf(w, " %.2f× |", v/b)
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

func number(v float64, ok bool) string {
	if !ok || math.IsNaN(v) {
		return "–"
	}
	if v >= 100 {
		return strconv.FormatFloat(v, 'f', 0, 64)
	}
	return strconv.FormatFloat(v, 'f', 1, 64)
}

// benchstat reads the "-ns" of the wait metrics as a unit and reports them
// in seconds, renamed.
const (
	p50Unit  = "p50-sec"
	p99Unit  = "p99-sec"
	p999Unit = "p99.9-sec"
)

// duration formats seconds with a unit that keeps three digits or so.
func duration(sec float64) string {
	switch ns := sec * 1e9; {
	case ns < 1e3:
		return fmt.Sprintf("%.0f ns", ns)
	case ns < 1e6:
		return fmt.Sprintf("%.3g µs", ns/1e3)
	default:
		return fmt.Sprintf("%.3g ms", ns/1e6)
	}
}

// writeWaits writes the acquire-wait percentiles side by side, one cell
// per pool and scenario: p50 / p99 / p99.9.
func writeWaits(w io.Writer, m *medians) {
	scenarios := m.scenarios("AcquireWait")
	if len(scenarios) == 0 {
		return
	}
	fmt.Fprintln(w, "Acquire wait p50 / p99 / p99.9 (medians over the rounds):")
	fmt.Fprintln(w)
	fmt.Fprint(w, "| scenario |")
	for _, p := range m.pools {
		fmt.Fprintf(w, " %s |", p)
	}
	fmt.Fprint(w, "\n|---|")
	for range m.pools {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
	for _, sc := range scenarios {
		fmt.Fprintf(w, "| %s |", sc)
		for _, p := range m.pools {
			var cell []string
			for _, unit := range []string{p50Unit, p99Unit, p999Unit} {
				if v, ok := m.get(unit, "AcquireWait", sc, p); ok {
					cell = append(cell, duration(v))
				} else {
					cell = append(cell, "–")
				}
			}
			fmt.Fprintf(w, " %s |", strings.Join(cell, " / "))
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

// writeWaited writes, per scenario and pool, the share of acquires that
// found nothing idle and waited, by each pool's own count. A pool whose
// share stays near 1 under load has fallen into a convoy: every release
// hands over to a parked waiter and every acquire parks.
func writeWaited(w io.Writer, m *medians) {
	const unit = "waited/op"
	scenarios := m.scenarios("AcquireRelease")
	if len(scenarios) == 0 || m.values[unit] == nil {
		return
	}
	fmt.Fprintln(w, "Share of acquires that had to wait (waited/op, by each pool's own counter; the channel keeps none):")
	fmt.Fprintln(w)
	var pools []string
	for _, p := range m.pools {
		for _, sc := range scenarios {
			if _, ok := m.get(unit, "AcquireRelease", sc, p); ok {
				pools = append(pools, p)
				break
			}
		}
	}
	fmt.Fprint(w, "| scenario |")
	for _, p := range pools {
		fmt.Fprintf(w, " %s |", p)
	}
	fmt.Fprint(w, "\n|---|")
	for range pools {
		fmt.Fprint(w, "---:|")
	}
	fmt.Fprintln(w)
	for _, sc := range scenarios {
		fmt.Fprintf(w, "| %s |", sc)
		for _, p := range pools {
			v, ok := m.get(unit, "AcquireRelease", sc, p)
			switch {
			case !ok:
				fmt.Fprint(w, " – |")
			case v == 0:
				fmt.Fprint(w, " 0 |")
			case v < 0.001:
				fmt.Fprintf(w, " %.2g |", v)
			default:
				fmt.Fprintf(w, " %.3f |", v)
			}
		}
		fmt.Fprintln(w)
	}
	fmt.Fprintln(w)
}

// writeTargets checks the medians against shoal's design targets: at most
// 40 ns and no allocation alone, at most 250 ns with 256 goroutines, and an
// acquire-wait p99 under contention no worse than vitess's.
func writeTargets(w io.Writer, m *medians) {
	type check struct {
		target   string
		measured string
		met      bool
		ok       bool // the data was there
	}
	var checks []check
	ns := func(sc, pool string) (float64, bool) {
		v, ok := m.get("sec/op", "AcquireRelease", sc, pool)
		return v * 1e9, ok
	}
	if v, ok := ns("serial", "shoal"); ok {
		checks = append(checks, check{"serial: ≤ 40 ns/op, by wall clock", fmt.Sprintf("%.1f ns/op", v), v <= 40, true})
	}
	// cpu-ns/op (benchstat calls it cpu-sec/op): the serial loop's own
	// thread CPU time, which other processes' load does not inflate.
	if v, ok := m.get("cpu-sec/op", "AcquireRelease", "serial", "shoal"); ok {
		v *= 1e9
		checks = append(checks, check{"serial: ≤ 40 ns/op, by thread CPU time", fmt.Sprintf("%.1f cpu-ns/op", v), v <= 40, true})
	}
	if v, ok := m.get("allocs/op", "AcquireRelease", "serial", "shoal"); ok {
		checks = append(checks, check{"serial: 0 allocs/op", fmt.Sprintf("%g allocs/op", v), v == 0, true})
	}
	if v, ok := ns("par256", "shoal"); ok {
		checks = append(checks, check{"par256: ≤ 250 ns/op", fmt.Sprintf("%.0f ns/op", v), v <= 250, true})
	}
	for _, sc := range []string{"par64", "par256", "par64work", "par256work"} {
		s, ok1 := m.get(p99Unit, "AcquireWait", sc, "shoal")
		v, ok2 := m.get(p99Unit, "AcquireWait", sc, "vitess")
		if ok1 && ok2 {
			checks = append(checks, check{sc + ": p99 wait ≤ vitess's",
				fmt.Sprintf("%s (vitess %s)", duration(s), duration(v)), s <= v, true})
		}
	}
	if len(checks) == 0 {
		return
	}
	fmt.Fprintln(w, "shoal against its design targets (medians of this run):")
	fmt.Fprintln(w)
	fmt.Fprintln(w, "| target | shoal | met |")
	fmt.Fprintln(w, "|---|---:|:---:|")
	for _, c := range checks {
		met := "no"
		if c.met {
			met = "yes"
		}
		fmt.Fprintf(w, "| %s | %s | %s |\n", c.target, c.measured, met)
	}
	fmt.Fprintln(w)
}
