package main

import (
	"cmp"
	"math"
	"regexp"
	"slices"
	"strings"
	"time"
)

// digits are replaced by N in error messages, so that the same error with
// other counts or ports is counted as one.
var digits = regexp.MustCompile(`[0-9]+`)

// Throughput windows: the rate before the fault is measured from second 1
// (after the pools' first dials) to the fault, and full throughput after the
// promotion is reached at the end of the first window of fullWindow whose
// rate is at least fullShare of it.
const (
	warmup     = time.Second
	fullWindow = 500 * time.Millisecond
	fullShare  = 0.9
	lastWindow = 2 * time.Second
)

// oneLine is err's message on one line (pgx lists a failed connect's hosts
// on lines of their own), digits made N.
func oneLine(err error) string {
	return digits.ReplaceAllString(strings.Join(strings.Fields(err.Error()), " "), "N")
}

// never marks a figure whose event did not happen within the run.
const never = time.Duration(math.MinInt64)

// figures are what the report shows of one run.
type figures struct {
	acked, failed      int
	failedBeforeFault  int
	firstAck           time.Duration // from the promotion's start; never when none
	full               time.Duration // from the promotion's start; never when none
	rateBefore, rateAt float64       // writes/s before the fault, in the run's last lastWindow
	stop               time.Duration // from the fault to the primary gone
	promotion          time.Duration // from the primary gone to the end of the promotion
	errs               []errCount    // most common first
	end                time.Duration
}

type errCount struct {
	msg string
	n   int
}

func measure(o *outcome, s spec) figures {
	f := figures{firstAck: never, full: never, promotion: o.promotedAt - o.downAt, stop: o.downAt - o.faultAt}
	var acks []time.Duration  // every acknowledged write's end
	var after []time.Duration // those of the writes begun once the primary had gone
	byMsg := make(map[string]int)
	for _, ws := range o.writes {
		for _, w := range ws {
			f.end = max(f.end, w.end)
			if w.err != nil {
				f.failed++
				if w.end < o.faultAt {
					f.failedBeforeFault++
				}
				byMsg[oneLine(w.err)]++
				continue
			}
			f.acked++
			acks = append(acks, w.end)
			if w.start >= o.downAt {
				after = append(after, w.end)
			}
		}
	}
	slices.Sort(acks)
	slices.Sort(after)
	in := func(acks []time.Duration, from, to time.Duration) int {
		i, _ := slices.BinarySearch(acks, from)
		j, _ := slices.BinarySearch(acks, to)
		return j - i
	}
	if span := o.faultAt - warmup; span > 0 {
		f.rateBefore = float64(in(acks, warmup, o.faultAt)) / span.Seconds()
	}
	f.rateAt = float64(in(acks, f.end-lastWindow, f.end+1)) / lastWindow.Seconds()
	// Only a write begun once the primary had gone is known to have been
	// acknowledged by the new primary: one in flight at the fault may have
	// been answered by the old one a moment before.
	if len(after) > 0 {
		f.firstAck = after[0] - o.downAt
	}
	want := fullShare * f.rateBefore * fullWindow.Seconds()
	for t := o.downAt; t+fullWindow <= f.end; t += 10 * time.Millisecond {
		if float64(in(after, t, t+fullWindow)) >= want {
			f.full = t + fullWindow - o.downAt
			break
		}
	}
	f.errs = sortedErrs(byMsg)
	return f
}

// sortedErrs lists the messages of byMsg with their counts, most common
// first.
func sortedErrs(byMsg map[string]int) []errCount {
	var errs []errCount
	for m, n := range byMsg {
		errs = append(errs, errCount{m, n})
	}
	slices.SortFunc(errs, func(a, b errCount) int { return cmp.Or(b.n-a.n, cmp.Compare(a.msg, b.msg)) })
	return errs
}
