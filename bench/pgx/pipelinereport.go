package main

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/shoalpool/shoal/bench/internal/mdtable"
)

// A pipelineTarget is one of the pipeline set's targets: the median over
// the rounds of pipelined-8's q/s divided by another contender's in the
// same round, at least min (above min when strict), at the worker counts
// it names (every count when nil). When ceiling is set (a target against
// a pool of whole connections), the report sets beside it what the
// protocol's ceiling reached against the same pool in the same rounds,
// which says whether the target is within reach on this machine at all.
type pipelineTarget struct {
	other   string
	min     float64
	strict  bool
	workers []int
	ceiling bool
}

var pipelineTargets = []pipelineTarget{
	{other: "pgxpool-32", min: 1.5, workers: []int{32, 128}, ceiling: true},
	{other: "pgxpool-8", min: 2, workers: []int{32, 128}, ceiling: true},
	{other: "pgbouncer-8", min: 1, strict: true},
	{other: "shoalpgx-8", min: 0.95, workers: []int{1}},
}

// pipelineMarkdown renders the pipeline set: q/s of every contender with
// its fraction of pgxpool-8, the targets judged cell by cell, the client's
// CPU per query and the latencies.
func (r *results) pipelineMarkdown(cmd, machine string, rounds int, d time.Duration) string {
	var b strings.Builder
	b.WriteString("### Pipelining: 8 connections against 8 and 32, and PgBouncer\n\n")
	fmt.Fprintf(&b, "Machine: %s. %d rounds of %s per cell, the contenders' order mirrored every second round (every pair in both orders); q/s is the best round, ratios the median of each round's pair.\n", machine, rounds, d)
	fmt.Fprintf(&b, "Command (from bench/): `%s`\n\n", cmd)
	b.WriteString("pipelined-8 is shoalpgx with `pool_max_conns=8` and `pool_pipeline`; shoalpgx-N and pgxpool-N hold N whole connections; pgbouncer-8 is pgxpool (128 client connections, unnamed statements) through PgBouncer in transaction mode with a server pool of 8; spread-8 is pipelined-8 with `pool_pipeline_fill=0`, its statements spread over the connections least-loaded first instead of filling one that answers quickly.")
	ceiling := r.index(ceilingName) >= 0
	if ceiling {
		fmt.Fprintf(&b, " %s is the protocol's ceiling here: pgx's own pipeline (pgconn) on 8 connections, each driven by one goroutine that sends `-pipeline` statements per round trip, every one its own implicit transaction, and reads their answers; it does not use the workers count (no goroutine hands a statement to another), so its row at every count is the same measure taken again, below 8 × `-pipeline` workers it keeps more statements in flight than that many workers could, and its latency is that of a round trip of the whole batch.", ceilingName)
	}
	inFlight32 := r.index(inFlight32Name) >= 0
	if inFlight32 {
		fmt.Fprintf(&b, " %s is the same on 4 connections, 8 statements per round trip each: 32 in flight, as many as 32 workers can keep.", inFlight32Name)
	}
	if r.pinnedLone {
		b.WriteString(" The 1-worker cells ran with this process and the server's processes pinned to CPU 0 (`-pin-lone`), so that each contender's lone caller shared its backend's CPU: left to the kernel, a lone caller's round trip to a backend on another CPU takes several times one on its own, whatever the pool.")
	}
	b.WriteString("\n\n")
	r.qpsTable(&b)

	b.WriteString("\nTargets, pipelined-8 against each, median of the rounds' ratios")
	cols := []string{"query", "workers", "against", "ratio (rounds' range)", "target", "verdict"}
	if ceiling {
		fmt.Fprintf(&b, "; beside a target against a pool, what %s reached against the same pool in the same rounds", ceilingName)
		if inFlight32 {
			fmt.Fprintf(&b, " (at 32 workers, %s)", inFlight32Name)
		}
		cols = append(cols, "the protocol's ceiling here")
	}
	b.WriteString(":\n\n")
	mdtable.Header(&b, cols...)
	met, missed, beyond := 0, 0, 0
	for _, row := range r.rows {
		for _, t := range pipelineTargets {
			if t.workers != nil && !slices.Contains(t.workers, row.workers) {
				continue
			}
			med, lo, hi, ok := r.pairRatio(row, "pipelined-8", t.other)
			if !ok {
				continue
			}
			verdict := "met"
			if !t.reached(med) {
				verdict, missed = "missed", missed+1
			} else {
				met++
			}
			op := ">="
			if t.strict {
				op = ">"
			}
			fmt.Fprintf(&b, "| %s | %d | %s | %.2fx (%.2f-%.2f) | %s %.2fx | %s |",
				row.query, row.workers, t.other, med, lo, hi, op, t.min, verdict)
			if ceiling {
				cell := "–"
				name := ceilingName
				if inFlight32 && row.workers == 32 {
					name = inFlight32Name
				}
				if cmed, clo, chi, ok := r.pairRatio(row, name, t.other); t.ceiling && ok {
					cell = fmt.Sprintf("%.2fx (%.2f-%.2f)", cmed, clo, chi)
					if !t.reached(cmed) {
						cell += ", short of the target"
						if verdict == "missed" {
							beyond++
						}
					}
				}
				fmt.Fprintf(&b, " %s |", cell)
			}
			b.WriteString("\n")
		}
	}
	fmt.Fprintf(&b, "\n%d targets met, %d missed", met, missed)
	if ceiling {
		at32 := ""
		if inFlight32 {
			at32 = "; at 32 workers, " + inFlight32Name
		}
		fmt.Fprintf(&b, ", %d of them beyond the protocol's ceiling on this machine (%s fell short of them too%s)", beyond, ceilingName, at32)
	}
	b.WriteString(".\n")

	b.WriteString("\nClient CPU per query (this process, user+system, and in brackets its user part: the client's own work, where the rest is system calls), lowest of the rounds:\n\n")
	r.table(&b, 0, func(row row, i int) string {
		cell := fmt.Sprintf("%.1f µs", float64(row.cpu[i])/1e3)
		if row.user != nil {
			cell += fmt.Sprintf(" (%.1f)", float64(row.user[i])/1e3)
		}
		return cell
	})
	b.WriteString("\nQuery latency as the workers saw it, p50 / p99, median over the rounds:\n\n")
	r.table(&b, 0, func(row row, i int) string { return latency(row.p50[i]) + " / " + latency(row.p99[i]) })
	return b.String()
}

// reached reports whether a median ratio of ratio meets t.
func (t pipelineTarget) reached(ratio float64) bool {
	return ratio > t.min || (!t.strict && ratio == t.min)
}

// pairRatio returns the median, lowest and highest over the rounds of a's
// q/s divided by b's in the same round, and false when either did not run.
func (r *results) pairRatio(row row, a, b string) (med, lo, hi float64, ok bool) {
	ia, ib := r.index(a), r.index(b)
	if ia < 0 || ib < 0 {
		return 0, 0, 0, false
	}
	var ratios []float64
	for k := range min(len(row.perRound[ia]), len(row.perRound[ib])) {
		if den := row.perRound[ib][k]; den > 0 {
			ratios = append(ratios, row.perRound[ia][k]/den)
		}
	}
	if len(ratios) == 0 {
		return 0, 0, 0, false
	}
	slices.Sort(ratios)
	return medians([][]float64{ratios})[0], ratios[0], ratios[len(ratios)-1], true
}

// index is the place of the contender named name, or -1.
func (r *results) index(name string) int {
	for i, c := range r.contenders {
		if c.name == name {
			return i
		}
	}
	return -1
}
