package benchrun

import (
	"encoding/csv"
	"encoding/json"
	"io"
	"slices"
	"strconv"
	"time"
)

// WriteJSON writes the report as indented JSON. A list with nothing in it
// (the groups of a skipped scenario, the scenarios of a run interrupted
// before its first) is written [] rather than null, so that a script can
// loop over it as over any other.
func WriteJSON(w io.Writer, r *Report) error {
	out := *r
	out.Scenarios = make([]ScenarioResult, len(r.Scenarios))
	for i, s := range r.Scenarios {
		s.Groups = slices.Clone(s.Groups)
		if s.Groups == nil {
			s.Groups = []GroupResult{}
		}
		for j := range s.Groups {
			if s.Groups[j].Results == nil {
				s.Groups[j].Results = []Result{}
			}
		}
		out.Scenarios[i] = s
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	// '&' as typed, not \u0026: the output filter (scrubWriter in
	// cmd/shoal) reads a query's parameters at '&', and would mask the rest
	// of an escaped query with a password before it.
	enc.SetEscapeHTML(false)
	return enc.Encode(&out)
}

// csvHeader names the CSV columns: one row per case, durations in ns, and
// one per skipped scenario with its name, status and reason only;
// ips is ops/s, conns_opened those opened in the measured window and
// conns_opened_total those from the case's start. A row of rounds sums
// ops, errors, elapsed_ns and the connections over its rounds, and
// window_ns is one round's: rounds, added last so that the columns before
// it keep their places, says how many (empty for a case that did not
// run).
var csvHeader = []string{
	"scenario", "group", "workers", "name", "status", "reason",
	"max_conns", "partitions", "conns_per_partition", "max_streams",
	"ops", "errors", "elapsed_ns", "ips",
	"mean_ns", "stddev_ns", "deviation_pct", "min_ns", "median_ns", "p99_ns", "p999_ns", "max_ns",
	"wait_p50_ns", "wait_p99_ns", "wait_p999_ns", "conns_opened", "conns_opened_total", "window_ns",
	"rounds",
}

// WriteCSV writes one row per case, with a header row. A scenario that did
// not run has a row too, as it has an entry in JSON: without it, a reader
// of the CSV could not tell a scenario skipped for this target from one
// not asked for.
func WriteCSV(w io.Writer, r *Report) error {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return err
	}
	ns := func(d time.Duration) string { return strconv.FormatInt(int64(d), 10) }
	itoa := strconv.Itoa
	for _, s := range r.Scenarios {
		for _, g := range s.Groups {
			for _, res := range g.Results {
				var maxConns, parts, perPart, streams string
				if p := res.Pool; p != nil {
					maxConns, parts, perPart, streams = itoa(p.MaxConns), itoa(p.Partitions), itoa(p.ConnsPerPartition), itoa(p.MaxStreams)
				}
				var w50, w99, w999, conns, connsTotal string
				if a := res.AcquireWait; a != nil {
					w50, w99, w999 = ns(a.P50), ns(a.P99), ns(a.P999)
				}
				if res.ConnsOpened != nil {
					conns = strconv.FormatInt(*res.ConnsOpened, 10)
				}
				if res.ConnsOpenedTotal != nil {
					connsTotal = strconv.FormatInt(*res.ConnsOpenedTotal, 10)
				}
				rounds := ""
				if res.Rounds > 0 {
					rounds = itoa(res.Rounds)
				}
				l := res.Latency
				row := []string{
					s.Name, g.Title, itoa(res.Workers), res.Name, string(res.Status), res.Reason,
					maxConns, parts, perPart, streams,
					strconv.FormatInt(res.Ops, 10), strconv.FormatInt(res.Errors, 10), ns(res.Elapsed),
					strconv.FormatFloat(res.IPS, 'f', 2, 64),
					ns(l.Mean), ns(l.StdDev), strconv.FormatFloat(l.DeviationPct, 'f', 2, 64),
					ns(l.Min), ns(l.Median), ns(l.P99), ns(l.P999), ns(l.Max),
					w50, w99, w999, conns, connsTotal, ns(res.Window),
					rounds,
				}
				if err := cw.Write(row); err != nil {
					return err
				}
			}
		}
		if s.Skipped != "" {
			row := []string{s.Name, "", "", "", string(StatusSkipped), s.Skipped}
			row = append(row, make([]string, len(csvHeader)-len(row))...)
			if err := cw.Write(row); err != nil {
				return err
			}
		}
	}
	cw.Flush()
	return cw.Error()
}
