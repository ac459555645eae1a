package main

import (
	"fmt"
	"io"
	"strings"

	"github.com/shoalpool/shoal/internal/benchrun"
	"github.com/shoalpool/shoal/internal/connstr"
)

// groupVerdict is what one table says: its winner, the cases within the
// noise of it, those beyond it, and those the noise could not be judged
// for.
type groupVerdict struct {
	scenario, title string
	winner          string
	tied, beyond    []rival
	unjudged        []rival
	failed          []string
}

// rival is a case measured against its table's fastest.
type rival struct {
	name  string
	ratio float64 // the fastest's ops/s over its own
	why   string  // why the noise was not judged
}

// judgeGroups reads every table of the report that measured two cases or
// more.
func judgeGroups(report *benchrun.Report) []groupVerdict {
	var out []groupVerdict
	for _, s := range report.Scenarios {
		for gi := range s.Groups {
			g := &s.Groups[gi]
			rs := g.Ranked()
			if len(rs) < 2 {
				continue
			}
			j := benchrun.JudgeGroup(rs)
			v := groupVerdict{scenario: s.Name, title: g.Title, winner: rs[0].Name}
			for i, r := range rs[1:] {
				c := j.VsFastest[i+1]
				rv := rival{name: r.Name, ratio: rs[0].IPS / r.IPS, why: c.Why}
				switch {
				case !c.Judged:
					v.unjudged = append(v.unjudged, rv)
				case c.Better():
					v.beyond = append(v.beyond, rv)
				default:
					v.tied = append(v.tied, rv)
				}
			}
			for _, r := range g.Results {
				if r.Status == benchrun.StatusFailed {
					v.failed = append(v.failed, r.Name)
				}
			}
			out = append(out, v)
		}
	}
	return out
}

// sentence says what the table says, in a line.
func (v groupVerdict) sentence() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, %s: %s ", v.scenario, v.title, v.winner)
	if len(v.tied) == 0 && len(v.unjudged) == 0 {
		b.WriteString("won")
	} else {
		b.WriteString("came first")
	}
	var clauses []string
	if len(v.tied) > 0 {
		clauses = append(clauses, fmt.Sprintf("%s %s within the noise of it (%s)", names(v.tied), were(v.tied), slowerBy(v.tied)))
	}
	if len(v.beyond) > 0 {
		clauses = append(clauses, fmt.Sprintf("%s %s %s, beyond the noise", names(v.beyond), were(v.beyond), slowerBy(v.beyond)))
	}
	if len(v.unjudged) > 0 {
		clauses = append(clauses, fmt.Sprintf("%s %s %s (the noise not judged)", names(v.unjudged), were(v.unjudged), slowerBy(v.unjudged)))
	}
	if len(v.tied) > 0 {
		b.WriteString(", but ")
	} else {
		b.WriteString(": ")
	}
	b.WriteString(strings.Join(clauses, "; "))
	if len(v.failed) > 0 {
		fmt.Fprintf(&b, " (%s failed: see above)", strings.Join(v.failed, ", "))
	}
	b.WriteString(".")
	return b.String()
}

// names lists the rivals' names: "a", "a and b", "a, b and c".
func names(rs []rival) string {
	n := make([]string, len(rs))
	for i, r := range rs {
		n[i] = r.name
	}
	if len(n) == 1 {
		return n[0]
	}
	return strings.Join(n[:len(n)-1], ", ") + " and " + n[len(n)-1]
}

func were(rs []rival) string {
	if len(rs) == 1 {
		return "was"
	}
	return "were"
}

// slowerBy says how much slower the rivals were: "1.07x slower", "1.07x
// to 1.16x slower".
func slowerBy(rs []rival) string {
	lo, hi := rs[0].ratio, rs[0].ratio
	for _, r := range rs {
		lo, hi = min(lo, r.ratio), max(hi, r.ratio)
	}
	if benchrun.FormatRatio(lo) == benchrun.FormatRatio(hi) {
		return benchrun.FormatRatio(lo) + " slower"
	}
	return benchrun.FormatRatio(lo) + " to " + benchrun.FormatRatio(hi) + " slower"
}

// writeVerdict closes `shoal bench`: what each table says about this
// machine and target, and what to run next.
func writeVerdict(w io.Writer, o *options, report *benchrun.Report, t *target) {
	verdicts := judgeGroups(report)
	if len(verdicts) == 0 {
		return
	}
	m := report.Machine
	where := "the embedded servers"
	if t != nil {
		where = t.Redacted
	}
	fmt.Fprintf(w, "\nVerdict for this machine (%s, %s) and %s:\n", m.CPU, benchrun.Plural(m.Cores, "core"), where)
	doubtful, unjudged, judged := 0, 0, 0
	for _, v := range verdicts {
		writeItem(w, v.sentence())
		doubtful += len(v.tied)
		unjudged += len(v.unjudged)
		judged += len(v.tied) + len(v.beyond)
	}
	if judged > 0 {
		basis := "on the spread of ops/s within each case's window; the cases ran one after another, so a change in the machine's load between them is not in it"
		if o.rounds > 1 {
			basis = fmt.Sprintf("round by round over %d rounds", o.rounds)
		}
		writeWrapped(w, "", fmt.Sprintf("Beyond the noise: at 95%% confidence over each table's comparisons, judged %s.", basis))
	}

	fmt.Fprintf(w, "\nWhat to try next (from a checkout, run shoal as go -C cmd/shoal run .):\n")
	switch {
	case o.rounds <= 1 && doubtful+unjudged > 0:
		writeItem(w, fmt.Sprintf("%s within the noise or not judged in one window: without --rounds 1, every case runs %d times, alternating, and each difference is judged round by round (--rounds 5 on a very busy machine).",
			differences(doubtful+unjudged), defaultBenchRounds))
	case o.rounds <= 1:
		writeItem(w, fmt.Sprintf("One window per case cannot show the machine's load changing between cases: without --rounds 1, every case runs %d times, alternating, and each difference is judged round by round.", defaultBenchRounds))
	case doubtful+unjudged > 0 && o.rounds < maxRounds:
		writeItem(w, fmt.Sprintf("%s still within the noise: more rounds (--rounds %d) or a quieter machine narrow the intervals.",
			differences(doubtful+unjudged), min(2*o.rounds, maxRounds)))
	case doubtful+unjudged > 0:
		writeItem(w, fmt.Sprintf("%s still within the noise after the most rounds --rounds takes: a quieter machine narrows the intervals.",
			differences(doubtful+unjudged)))
	}
	if o.quick && !o.durationSet && o.duration < defaultBenchDuration {
		// Said only of windows --quick shortened: with a --duration given
		// beside it, or one of the default or longer, dropping --quick
		// would not lengthen them.
		writeItem(w, fmt.Sprintf("This was --quick, %s windows: without it each window lasts %s, and the figures settle.", o.duration, defaultBenchDuration))
	}
	switch {
	case t == nil:
		writeItem(w, "Measure your own server: shoal bench --target postgres://user@host/db (or https://, grpc://, clickhouse+http://, influxdb+http://) runs the scenarios that fit it.")
		writeItem(w, "Size a PostgreSQL pool: shoal sweep --target postgres://user@host/db tries partitions x connections and recommends one, with the settings to paste.")
	case t.Kind == targetPostgres:
		writeItem(w, fmt.Sprintf("Size the pool for this server: this sweep tries partitions x connections and recommends one, with the settings to paste%s:", passwordBackIn(t.Raw)))
		// On a line of its own: wrapped, a key=value target's spaces would
		// become line breaks inside the quotes.
		fmt.Fprintf(w, "    shoal sweep --target %s\n", shellQuote(t.Redacted))
	}
}

// passwordBackIn is " (put your password back in)" for a connection
// string that has one, masked or not, where shoal prints it masked, and ""
// for one that has none.
func passwordBackIn(connString string) string {
	if len(connstr.Read(connString).Secrets) > 0 {
		return " (put your password back in)"
	}
	return ""
}

// shellQuote quotes s as one word for a POSIX shell: in single quotes,
// each ' in it closed, escaped and reopened.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}

// differences writes "1 difference was", "3 differences were".
func differences(n int) string {
	if n == 1 {
		return "1 difference was"
	}
	return fmt.Sprintf("%d differences were", n)
}

// verdictWidth is where the verdict's lines wrap.
const verdictWidth = 100

// writeItem writes text as an item of a list: "- " and the text, wrapped,
// its further lines indented under the first's text.
func writeItem(w io.Writer, text string) { writeWrapped(w, "- ", text) }

// writeWrapped writes text wrapped at verdictWidth, the first line after
// first and the others indented as far.
func writeWrapped(w io.Writer, first, text string) {
	indent := strings.Repeat(" ", len(first))
	line := first
	for _, word := range strings.Fields(text) {
		if len(line) > len(indent) && len(line)+1+len(word) > verdictWidth {
			fmt.Fprintln(w, line)
			line = indent
		}
		if len(line) > len(indent) {
			line += " "
		}
		line += word
	}
	fmt.Fprintln(w, line)
}
