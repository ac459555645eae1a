package benchrun

import (
	"math"
	"strconv"
	"strings"
	"time"
)

// A column of the tables is in one unit, named in its header, so that a
// reader compares digits, not units: throughput always in ops/s, the
// latencies of a table in the one unit that suits its smallest value.
// Numbers keep three significant digits (4,630, 88.3, 0.122), more only
// when the integer part has them.

// durationUnit is a unit of time for display.
type durationUnit struct {
	name  string
	scale float64 // nanoseconds per unit
}

// durationUnits, smallest first. "µs" is the micro sign, as Go's own
// time.Duration.String writes it.
var durationUnits = []durationUnit{
	{"ns", 1},
	{"µs", 1e3},
	{"ms", 1e6},
	{"s", 1e9},
	{"min", 60e9},
	{"h", 3600e9},
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

// columnUnit picks the unit of a column of durations (ns): the largest in
// which its smallest value above zero is still 1 or more, so that most
// values have no leading zeros, unless its largest value would then run
// to six digits (477,390 µs), when it is the next unit up (0.642 to 477
// ms). A column of zeros is in µs.
func columnUnit(values []float64) durationUnit {
	smallest, largest := math.Inf(1), 0.0
	for _, v := range values {
		if v > 0 {
			smallest, largest = min(smallest, v), max(largest, v)
		}
	}
	if largest == 0 {
		return durationUnits[1]
	}
	best := 0
	for i, u := range durationUnits {
		if smallest >= u.scale {
			best = i
		}
	}
	if largest/durationUnits[best].scale >= 1e5 && best+1 < len(durationUnits) {
		best++
	}
	return durationUnits[best]
}

// in writes ns as a number of u, without the unit: the column's header
// names it.
func (u durationUnit) in(ns float64) string { return formatSig(ns / u.scale) }

// formatSig writes v with three significant digits and no exponent:
// 0.0883, 0.122, 4.63, 88.3, and whole numbers from 100 up, with thousands
// separated by commas (4,630, 65,570).
func formatSig(v float64) string {
	a := math.Abs(v)
	switch {
	case v == 0:
		return "0"
	case a >= 99.95:
		return groupThousands(strconv.FormatFloat(math.Round(v), 'f', 0, 64))
	case a >= 9.995:
		return strconv.FormatFloat(v, 'f', 1, 64)
	case a >= 0.9995:
		return strconv.FormatFloat(v, 'f', 2, 64)
	}
	digits := 2 - int(math.Floor(math.Log10(a)))
	return strconv.FormatFloat(v, 'f', digits, 64)
}

// groupThousands puts a comma between each three digits of an integer.
func groupThousands(s string) string {
	sign := ""
	if strings.HasPrefix(s, "-") {
		sign, s = "-", s[1:]
	}
	var b strings.Builder
	for i, c := range s {
		if i > 0 && (len(s)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteRune(c)
	}
	return sign + b.String()
}

// FormatOps writes a throughput in ops/s, without the unit: 65,570, 910,
// 0.0407.
func FormatOps(v float64) string { return formatSig(v) }

// FormatInt writes a count with its thousands separated: 2,165.
func FormatInt(n int64) string { return groupThousands(strconv.FormatInt(n, 10)) }

// FormatDuration writes d in its own best unit: "2.03 min", "288 µs".
func FormatDuration(d time.Duration) string {
	u := durationUnits[bestDuration(float64(d))]
	return u.in(float64(d)) + " " + u.name
}

// FormatRatio writes how many times one figure is another: "1.07x",
// "37.9x", "142x".
func FormatRatio(r float64) string { return formatSig(r) + "x" }
