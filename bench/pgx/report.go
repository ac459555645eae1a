package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/shoalpool/shoal/bench/internal/mdtable"
)

// results are the best rounds of every contender, per query and worker
// count.
type results struct {
	conns      int
	contenders []contender
	rows       []row
	cpr        []cprRow
	pinnedLone bool // the 1-worker cells ran pinned to one CPU (-pin-lone)
}

type row struct {
	query   string
	workers int
	qps     []float64       // by contender, in contenders' order
	cpu     []time.Duration // client CPU per query, lowest of the rounds
	user    []time.Duration // its user part (in that round); nil where not measured
	cs      []float64       // client voluntary context switches per query, lowest of the rounds

	// medianRatio is, per contender after the first, the median over the
	// rounds of its throughput divided by the first's in the same round.
	medianRatio []float64

	// p50 and p99 are, per contender, the median over the rounds of each
	// round's query latency percentiles, in nanoseconds.
	p50, p99 []float64

	// idle is, per contender, the median over the rounds of the share of
	// the machine's CPU time left unused (0 when /proc/stat is missing).
	idle []float64

	// perRound is, per contender, the q/s of each round, for ratios of
	// any two contenders paired round by round.
	perRound [][]float64
}

type cprRow struct {
	query string
	qps   float64
}

// markdown renders the results as a fragment for BENCHMARKS.md: queries/s
// and, for every contender after the first (dedicated), the fraction of
// the first.
func (r *results) markdown(cmd, machine string, rounds int, d time.Duration) string {
	var b strings.Builder
	fmt.Fprintf(&b, "### PostgreSQL through pgx: %d connections\n\n", r.conns)
	fmt.Fprintf(&b, "Machine: %s. Best of %d interleaved rounds of %s per cell.\n", machine, rounds, d)
	fmt.Fprintf(&b, "Command (from bench/): `%s`\n\n", cmd)
	r.qpsTable(&b)
	b.WriteString("\nClient cost per query, lowest of the rounds: CPU time of this process (user+system, µs), and its threads' voluntary context switches (a thread going to sleep for want of work, to be woken by a futex or epoll later; less sensitive to the machine's other load than throughput).\n\n")
	r.table(&b, 0, func(row row, i int) string {
		return fmt.Sprintf("%.1f µs, %.2f sw", float64(row.cpu[i])/1e3, row.cs[i])
	})
	b.WriteString("\nMedian over the rounds of each round's ratio to the dedicated run that opened the round (pairs cancel the machine's slow swings in load; the best-of table above can pair a lucky round with an unlucky one):\n\n")
	r.table(&b, 1, func(row row, i int) string { return fmt.Sprintf("%.2f", row.medianRatio[i]) })
	b.WriteString("\nQuery latency as the workers saw it, a wait for a connection included: p50 / p99 of each round, median over the rounds. With more workers than connections the pools' latencies hold the queueing that dedicated's fixed 8 workers never see; barging (shoalpgx, BargeWindow 4ms by default, against shoalpgx-fifo's strict hand-off) moves it from the median to the tail.\n\n")
	r.table(&b, 0, func(row row, i int) string { return latency(row.p50[i]) + " / " + latency(row.p99[i]) })
	b.WriteString("\nShare of the whole machine's CPU time left idle during the run, median over the rounds (client and server share the machine; from /proc/stat). Where a pool is below dedicated while the machine sat idle, CPU was not what it lacked: its connections spent time between queries on the client side, waiting for a goroutine to be handed them or to run.\n\n")
	r.table(&b, 0, func(row row, i int) string { return fmt.Sprintf("%.0f%%", 100*row.idle[i]) })
	if len(r.cpr) > 0 {
		fmt.Fprintf(&b, "\nConnect-per-request (a new connection, with SCRAM authentication, for every query; %d at once):\n\n", r.conns)
		b.WriteString("| query | q/s | of dedicated, 8 workers |\n|---|---:|---:|\n")
		for _, c := range r.cpr {
			ded := 0.0
			for _, row := range r.rows {
				if row.query == c.query && row.workers == r.conns {
					ded = row.qps[0]
				}
			}
			frac := "n/a"
			if ded > 0 {
				frac = fmt.Sprintf("%.4f (1/%.0f)", c.qps/ded, ded/c.qps)
			}
			fmt.Fprintf(&b, "| %s | %.0f | %s |\n", c.query, c.qps, frac)
		}
	}
	b.WriteString("\nDedicated is one goroutine per connection on its own `*pgx.Conn`, the ceiling for this many connections at every worker count (see bench/pgx/doc.go).\n")
	return b.String()
}

// qpsTable writes each contender's best q/s per query and worker count,
// and its fraction of the first contender's.
func (r *results) qpsTable(b *strings.Builder) {
	cols := []string{"query", "workers", r.contenders[0].name + " q/s"}
	for _, c := range r.contenders[1:] {
		cols = append(cols, fmt.Sprintf("%s q/s (of %s)", c.name, r.contenders[0].name))
	}
	mdtable.Header(b, cols...)
	for _, row := range r.rows {
		fmt.Fprintf(b, "| %s | %d |", row.query, row.workers)
		for i, q := range row.qps {
			if i == 0 {
				fmt.Fprintf(b, " %.0f |", q)
			} else {
				fmt.Fprintf(b, " %.0f (%.2f) |", q, q/row.qps[0])
			}
		}
		b.WriteString("\n")
	}
}

// table writes one row per query and worker count, with a column per
// contender from contenders[first] on, each cell made by cell.
func (r *results) table(b *strings.Builder, first int, cell func(row row, contender int) string) {
	cols := []string{"query", "workers"}
	for _, c := range r.contenders[first:] {
		cols = append(cols, c.name)
	}
	mdtable.Header(b, cols...)
	for _, row := range r.rows {
		fmt.Fprintf(b, "| %s | %d |", row.query, row.workers)
		for i := first; i < len(r.contenders); i++ {
			fmt.Fprintf(b, " %s |", cell(row, i))
		}
		b.WriteString("\n")
	}
}

// latency formats nanoseconds as microseconds, or milliseconds from 1ms.
func latency(ns float64) string {
	if ns >= 1e6 {
		return fmt.Sprintf("%.1f ms", ns/1e6)
	}
	return fmt.Sprintf("%.0f µs", ns/1e3)
}
