package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/shoalpool/shoal/bench/internal/mdtable"
)

// results are the best rounds of every contender, per target and worker
// count.
type results struct {
	contenders []contender
	rows       []row
}

type row struct {
	target  string
	workers int
	rps     []float64 // best round, by contender, in contenders' order
	cpu     []float64 // median µs of process CPU per request, by contender
	idle    []float64 // median share of the machine left idle, by contender; -1 unknown

	// pairedRatio is, per contender but shoalhttp, the median over the
	// rounds of shoalhttp's req/s over that contender's in the same round.
	pairedRatio []float64
}

// markdown renders the results as a fragment for BENCHMARKS.md: requests/s
// of every contender and shoalhttp's ratio to each of the others.
func (r *results) markdown(cmd, machine string, rounds int, d time.Duration) string {
	var b strings.Builder
	b.WriteString("### HTTP through shoalhttp\n\n")
	fmt.Fprintf(&b, "Machine: %s. Best of %d interleaved rounds of %s per cell.\n", machine, rounds, d)
	fmt.Fprintf(&b, "Command (from bench/): `%s`\n\n", cmd)
	last := len(r.contenders) - 1 // shoalhttp
	var rpsCols, ratioCols, nameCols []string
	for _, c := range r.contenders {
		rpsCols = append(rpsCols, c.name+" req/s")
		nameCols = append(nameCols, c.name)
	}
	for _, c := range r.contenders[:last] {
		ratioCols = append(ratioCols, "shoalhttp / "+c.name)
	}
	r.table(&b, append(rpsCols, ratioCols...), func(row row) []string {
		var cells []string
		for _, v := range row.rps {
			cells = append(cells, fmt.Sprintf("%.0f", v))
		}
		for _, v := range row.rps[:last] {
			cells = append(cells, fmt.Sprintf("%.2fx", row.rps[last]/v))
		}
		return cells
	})
	b.WriteString("\nshoalhttp's requests/s over each other contender's in the same round, median of the rounds " +
		"(pairs cancel the machine's slow swings in load; the best-of table above can pair a lucky round with an unlucky one):\n\n")
	r.table(&b, ratioCols, func(row row) []string { return formatAll(row.pairedRatio, "%.2fx") })
	b.WriteString("\nThis process's CPU time per request (user + system, µs, median of the rounds): the client's own cost, " +
		"plus the server's for the in-process TLS target. Less sensitive to the machine's other load than req/s.\n\n")
	r.table(&b, nameCols, func(row row) []string { return formatAll(row.cpu, "%.1f") })
	b.WriteString("\nShare of the whole machine's CPU time left idle during the run, median of the rounds (from /proc/stat; " +
		"the client and the servers share the machine). Near 0%, the machine was saturated: a client then gains only " +
		"what it saves in CPU per request, against the servers' share of each request, which no client changes.\n\n")
	r.table(&b, nameCols, func(row row) []string {
		cells := make([]string, len(row.idle))
		for i, v := range row.idle {
			cells[i] = "-"
			if v >= 0 {
				cells[i] = fmt.Sprintf("%.0f%%", 100*v)
			}
		}
		return cells
	})
	b.WriteString("\nnew-client: a new http.Client and Transport per request; default: a clone of http.DefaultTransport; " +
		"tuned: the same with MaxIdleConnsPerHost = workers; shoal+clientconn: shoal pools of net/http's own connections (Transport.NewClientConn); shoalhttp: zero Options (see bench/http/doc.go).\n")
	return b.String()
}

// table writes a table with a row per target and worker count: the target,
// the workers, then cols, filled by cells.
func (r *results) table(b *strings.Builder, cols []string, cells func(row row) []string) {
	mdtable.Header(b, append([]string{"target", "workers"}, cols...)...)
	for _, row := range r.rows {
		fmt.Fprintf(b, "| %s | %d |", row.target, row.workers)
		for _, c := range cells(row) {
			fmt.Fprintf(b, " %s |", c)
		}
		b.WriteString("\n")
	}
}

// formatAll formats every value with format.
func formatAll(vs []float64, format string) []string {
	out := make([]string, len(vs))
	for i, v := range vs {
		out[i] = fmt.Sprintf(format, v)
	}
	return out
}
