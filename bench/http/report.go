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
	cols := []string{"target", "workers"}
	for _, c := range r.contenders {
		cols = append(cols, c.name+" req/s")
	}
	for _, c := range r.contenders[:last] {
		cols = append(cols, "shoalhttp / "+c.name)
	}
	mdtable.Header(&b, cols...)
	for _, row := range r.rows {
		fmt.Fprintf(&b, "| %s | %d |", row.target, row.workers)
		for _, v := range row.rps {
			fmt.Fprintf(&b, " %.0f |", v)
		}
		for _, v := range row.rps[:last] {
			fmt.Fprintf(&b, " %.2fx |", row.rps[last]/v)
		}
		b.WriteString("\n")
	}
	b.WriteString("\nshoalhttp's requests/s over each other contender's in the same round, median of the rounds " +
		"(pairs cancel the machine's slow swings in load; the best-of table above can pair a lucky round with an unlucky one):\n\n")
	cols = []string{"target", "workers"}
	for _, c := range r.contenders[:last] {
		cols = append(cols, "shoalhttp / "+c.name)
	}
	mdtable.Header(&b, cols...)
	for _, row := range r.rows {
		fmt.Fprintf(&b, "| %s | %d |", row.target, row.workers)
		for _, v := range row.pairedRatio {
			fmt.Fprintf(&b, " %.2fx |", v)
		}
		b.WriteString("\n")
	}
	b.WriteString("\nThis process's CPU time per request (user + system, µs, median of the rounds): the client's own cost, " +
		"plus the server's for the in-process TLS target. Less sensitive to the machine's other load than req/s.\n\n")
	cols = []string{"target", "workers"}
	for _, c := range r.contenders {
		cols = append(cols, c.name)
	}
	mdtable.Header(&b, cols...)
	for _, row := range r.rows {
		fmt.Fprintf(&b, "| %s | %d |", row.target, row.workers)
		for _, v := range row.cpu {
			fmt.Fprintf(&b, " %.1f |", v)
		}
		b.WriteString("\n")
	}
	b.WriteString("\nnew-client: a new http.Client and Transport per request; default: a clone of http.DefaultTransport; " +
		"tuned: the same with MaxIdleConnsPerHost = workers; shoalhttp: zero Options (see bench/http/doc.go).\n")
	return b.String()
}
