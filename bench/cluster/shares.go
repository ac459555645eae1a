package main

import (
	"fmt"
	"strings"
	"time"
)

// shareSummary is what a cell's timelines say about one worker's pool over
// the measured window.
type shareSummary struct {
	share, demand, conns float64 // means over the window's samples
	dials                int64   // dials during the window
}

// windowTail is left off the end of the measured window in the summaries:
// on a loaded machine the workers' reads drift apart, so the first
// to finish closes its pool while the others still run, and their shares
// grow into what it gave back. That is the budget working, not the load.
const windowTail = 250 * time.Millisecond

// window returns the samples of tl inside the measured window, which
// starts warmup after go and lasts duration, less windowTail.
func window(tl []statSample, warmup, duration time.Duration) []statSample {
	end := warmup + duration - windowTail
	var out []statSample
	for _, s := range tl {
		if s.T >= warmup && s.T < end {
			out = append(out, s)
		}
	}
	return out
}

// summarize sums up each worker's timeline over the measured window.
func summarize(c cell, warmup, duration time.Duration) []shareSummary {
	out := make([]shareSummary, len(c.timelines))
	for w, tl := range c.timelines {
		win := window(tl, warmup, duration)
		if len(win) == 0 {
			continue
		}
		var s shareSummary
		for _, x := range win {
			s.share += float64(x.Share)
			s.demand += float64(x.Demand)
			s.conns += float64(x.Conns)
		}
		n := float64(len(win))
		s.share, s.demand, s.conns = s.share/n, s.demand/n, s.conns/n
		s.dials = win[len(win)-1].Dials - win[0].Dials
		out[w] = s
	}
	return out
}

// settledAt is how long after go every worker's share came within one of
// its mean over the window and stayed there to the window's end (less
// windowTail), or -1 if some worker's never did (or there are no
// samples). It is how long the budget took to move the shares to where
// the load is.
func settledAt(c cell, warmup, duration time.Duration) time.Duration {
	sums := summarize(c, warmup, duration)
	end := warmup + duration - windowTail
	at := time.Duration(0)
	for w, tl := range c.timelines {
		var kept []statSample
		for _, s := range tl {
			if s.T < end {
				kept = append(kept, s)
			}
		}
		if len(kept) == 0 {
			return -1
		}
		mean := sums[w].share
		last := -1 // the last sample off the mean
		for i, s := range kept {
			if d := float64(s.Share) - mean; d > 1 || d < -1 {
				last = i
			}
		}
		switch {
		case last == len(kept)-1:
			return -1
		case last >= 0:
			at = max(at, kept[last+1].T)
		}
	}
	return at
}

// filledAt is how long after go every worker's pool first held within one
// of its mean share over the window (less windowTail) in connections, or
// of its mean demand when that is smaller (a static pool's cold worker
// needs 4 of its 10), or -1 if some worker's never did. A share is only a permit: the pool still
// has to dial, and on a loaded machine the server takes seconds to accept
// forty new sessions.
func filledAt(c cell, warmup, duration time.Duration) time.Duration {
	sums := summarize(c, warmup, duration)
	end := warmup + duration - windowTail
	at := time.Duration(0)
	for w, tl := range c.timelines {
		first := time.Duration(-1)
		for _, s := range tl {
			if s.T >= end {
				break
			}
			if float64(s.Conns) >= min(sums[w].share, sums[w].demand)-1 {
				first = s.T
				break
			}
		}
		if first < 0 {
			return -1
		}
		at = max(at, first)
	}
	return at
}

// perWorker formats one figure per worker, " / " between.
func perWorker(sums []shareSummary, f func(shareSummary) string) string {
	parts := make([]string, len(sums))
	for i, s := range sums {
		parts[i] = f(s)
	}
	return strings.Join(parts, " / ")
}

// traceCSV is every sample of every cell, one line each, for -trace. Over
// several rounds each line also says its round, in a last column.
func traceCSV(cells []cell) string {
	rounds := len(byRound(cells)) > 1
	var b strings.Builder
	b.WriteString("load,contender,worker,t_ms,share,demand,conns,waiting,dials,fair,held,members")
	if rounds {
		b.WriteString(",round")
	}
	b.WriteString("\n")
	for _, c := range cells {
		for w, tl := range c.timelines {
			for _, s := range tl {
				fmt.Fprintf(&b, "%s,%s,%d,%d,%d,%d,%d,%d,%d,%d,%d,%d", c.load, c.contender, w, s.T.Milliseconds(),
					s.Share, s.Demand, s.Conns, s.Waiting, s.Dials, s.Fair, s.Held, s.Members)
				if rounds {
					fmt.Fprintf(&b, ",%d", c.round)
				}
				b.WriteString("\n")
			}
		}
	}
	return b.String()
}
