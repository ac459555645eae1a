package main

import (
	"cmp"
	"fmt"
	"io"
	"slices"
	"strings"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// writeRounds prints the sweep's statistics under its table, in the
// table's order (fastest first): each configuration's mean throughput
// with the 95% interval of its rounds, its ratio to the default with the
// sweep's confidence, whether that is significant, and the rounds
// themselves, so that a reader sees the spread the verdict rests on.
func writeRounds(w io.Writer, table []sweepConfig, results []benchrun.Result, v verdict) {
	order := make([]int, len(results))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return cmp.Compare(results[b].IPS, results[a].IPS) })
	width := len("Name")
	for _, r := range results {
		width = max(width, len(r.Name))
	}
	fmt.Fprintf(w, "\nRounds: ops/s per round; vs default: the ratio of throughputs, its interval at %s confidence each (%.0f%% over all %d comparisons)\n",
		benchrun.FormatLevel(v.Level), (1-sweepAlpha)*100, max(len(results)-1, 1))
	fmt.Fprintf(w, "%-*s %11s %11s %11s %17s  %-8s %s\n", width, "Name", "mean", "95% CI", "vs default", "interval", "verdict", "rounds")
	for _, i := range order {
		r, c := results[i], v.VsDefault[i]
		mean, half := meanCI(r.RoundIPS)
		verdict, ratio, interval := "", benchrun.FormatBound(c.Ratio), benchrun.FormatBound(c.Low)+" - "+benchrun.FormatBound(c.High)
		switch {
		case table[i].isDefault:
			ratio, interval = "1x", ""
		case c.Better():
			verdict = "faster"
		case c.Worse():
			verdict = "slower"
		default:
			// Not "same": too few or too spread rounds say nothing.
			verdict = "not sig."
		}
		var each []string
		for _, x := range r.RoundIPS {
			each = append(each, benchrun.FormatOps(x))
		}
		fmt.Fprintf(w, "%-*s %11s %11s %11s %17s  %-8s %s\n", width, r.Name, benchrun.FormatOps(mean), "±"+benchrun.FormatOps(half),
			ratio, interval, verdict, strings.Join(each, " "))
	}
}
