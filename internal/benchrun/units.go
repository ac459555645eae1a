package benchrun

import (
	"math"
	"strconv"
	"time"
)

// Benchee prints each column in one unit: the unit that is best for most of
// the column's values, the larger one on a tie. These helpers do the same.

// durationUnit is a unit of time for display.
type durationUnit struct {
	name  string
	scale float64 // nanoseconds per unit
}

var durationUnits = []durationUnit{
	{"ns", 1},
	{"μs", 1e3},
	{"ms", 1e6},
	{"s", 1e9},
	{"min", 60e9},
	{"h", 3600e9},
}

// countUnit is a scale for counts such as operations per second.
type countUnit struct {
	name  string
	scale float64
}

var countUnits = []countUnit{
	{"", 1},
	{"K", 1e3},
	{"M", 1e6},
	{"B", 1e9},
}

// bestDuration returns the index of the largest unit in which ns is at
// least 1.
func bestDuration(ns float64) int {
	best := 0
	for i, u := range durationUnits {
		if math.Abs(ns) >= u.scale {
			best = i
		}
	}
	return best
}

// bestCount returns the index of the largest scale in which v is at least 1.
func bestCount(v float64) int {
	best := 0
	for i, u := range countUnits {
		if math.Abs(v) >= u.scale {
			best = i
		}
	}
	return best
}

// mostFrequent returns the index seen most often in idx, the larger one on a
// tie; 0 for none.
func mostFrequent(idx []int) int {
	counts := map[int]int{}
	best, bestN := 0, 0
	for _, i := range idx {
		counts[i]++
	}
	for i, n := range counts {
		if n > bestN || (n == bestN && i > best) {
			best, bestN = i, n
		}
	}
	return best
}

// durationColumnUnit picks one unit for a column of durations (ns).
func durationColumnUnit(values []float64) durationUnit {
	idx := make([]int, 0, len(values))
	for _, v := range values {
		idx = append(idx, bestDuration(v))
	}
	return durationUnits[mostFrequent(idx)]
}

// countColumnUnit picks one scale for a column of counts.
func countColumnUnit(values []float64) countUnit {
	idx := make([]int, 0, len(values))
	for _, v := range values {
		idx = append(idx, bestCount(v))
	}
	return countUnits[mostFrequent(idx)]
}

// formatNumber prints v with two decimals, or with three significant digits
// when it is below 1 (0.0407, 0.00822), as Benchee does.
func formatNumber(v float64) string {
	if v == 0 {
		return "0"
	}
	if math.Abs(v) >= 1 {
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	digits := 2 - int(math.Floor(math.Log10(math.Abs(v))))
	return strconv.FormatFloat(v, 'f', digits, 64)
}

// formatIn prints ns in unit u: "24.59 s", "288.06 μs".
func (u durationUnit) formatIn(ns float64) string {
	return formatNumber(ns/u.scale) + " " + u.name
}

// formatIn prints v in scale u: "3.47 K", "164.07".
func (u countUnit) formatIn(v float64) string {
	s := formatNumber(v / u.scale)
	if u.name != "" {
		s += " " + u.name
	}
	return s
}

// FormatDuration prints d in its own best unit, Benchee-style ("2.03 min").
func FormatDuration(d time.Duration) string {
	return durationUnits[bestDuration(float64(d))].formatIn(float64(d))
}

// FormatCount prints v in its own best scale, Benchee-style ("3.47 K").
func FormatCount(v float64) string {
	return countUnits[bestCount(v)].formatIn(v)
}
