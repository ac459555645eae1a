package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shoalpool/shoal/bench/internal/median"
)

// named matches the contender called name.
func named(name string) func(contender) bool {
	return func(c contender) bool { return c.name == name }
}

// report renders the rounds as markdown: a row per contender and round,
// then the medians and the two figures the change is judged on.
func report(cmd, machine string, w workload, results [][]*tally) string {
	var b strings.Builder
	fmt.Fprintf(&b, "`%s`\n\n%s. %d workers on MaxConns %d; one statement in %d is %s with a %s deadline (from before the acquire), the others SELECT 1; %s per contender and round.\n\n",
		cmd, machine, w.workers, w.conns, w.every, sleepSQL(w.sleep), w.deadline, w.duration)
	b.WriteString("| contender | round | served | served/s | abandoned | cancelled at the server | their callers past the deadline, mean / max | new connections | most at the server | failed |\n")
	b.WriteString("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n")
	served := make([][]float64, len(contenders))
	for i, c := range contenders {
		for r, t := range results[i] {
			past := "-"
			if t.canceled.Load() > 0 {
				past = fmt.Sprintf("%s / %s", t.meanPast(), time.Duration(t.longest.Load()).Round(time.Microsecond))
			}
			fmt.Fprintf(&b, "| %s | %d | %d | %.0f | %d | %d | %s | %d | %d | %d |\n", c.name, r+1,
				t.served.Load(), float64(t.served.Load())/w.duration.Seconds(), t.abandoned.Load(), t.canceled.Load(),
				past, t.newConns, t.maxAtServer, t.failed.Load())
			served[i] = append(served[i], float64(t.served.Load()))
		}
	}
	b.WriteString("\n")
	for i, c := range contenders {
		var abandoned, conns int64
		for _, t := range results[i] {
			abandoned += t.abandoned.Load()
			conns += t.newConns
		}
		share := 0.0
		if abandoned > 0 {
			share = 100 * float64(conns) / float64(abandoned)
		}
		fmt.Fprintf(&b, "- %s: median %.0f served per round; %d new connections for %d abandoned statements (%.1f%%)\n",
			c.name, median.Of(served[i]), conns, abandoned, share)
	}
	// Each contender's rounds against the same rounds' pgxpool.
	if base := slices.IndexFunc(contenders, named("pgxpool")); base >= 0 {
		for i, c := range contenders {
			if i == base {
				continue
			}
			var ratios []float64
			for r := range results[i] {
				if p := float64(results[base][r].served.Load()); p > 0 {
					ratios = append(ratios, float64(results[i][r].served.Load())/p)
				}
			}
			fmt.Fprintf(&b, "- %s / pgxpool, statements served, median of the rounds' ratios: %.2fx\n", c.name, median.Of(ratios))
		}
	}
	return b.String()
}
