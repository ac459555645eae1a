package main

import (
	"fmt"
	"strings"
	"time"
	"unicode/utf8"
)

// dur formats a duration for the tables: µs below a millisecond, ms below
// ten seconds, s above; never as "not in the run".
func dur(d time.Duration) string {
	switch {
	case d == never:
		return "not in the run"
	case d < time.Millisecond:
		return fmt.Sprintf("%.0f µs", float64(d)/1e3)
	case d < 10*time.Millisecond:
		return fmt.Sprintf("%.1f ms", float64(d)/1e6)
	case d < 10*time.Second:
		return fmt.Sprintf("%.0f ms", float64(d)/1e6)
	default:
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
}

// message is err's text on one line, the secrets replaced, cut to n bytes,
// with backquotes made quotes so that it fits in a Markdown code span.
func message(err error, n int, secrets ...string) string {
	if err == nil {
		return "none (it succeeded)"
	}
	m := strings.Join(strings.Fields(err.Error()), " ")
	for _, s := range secrets {
		if s != "" {
			m = strings.ReplaceAll(m, s, "<password>")
		}
	}
	return strings.ReplaceAll(cut(m, n), "`", "'")
}

// writeErrs writes a list item of the first three messages of errs.
func writeErrs(b *strings.Builder, label string, errs []errCount) {
	if len(errs) == 0 {
		fmt.Fprintf(b, "- %s: none\n", label)
		return
	}
	fmt.Fprintf(b, "- %s:", label)
	for i, e := range errs {
		if i == 3 {
			fmt.Fprintf(b, " and %d other messages", len(errs)-3)
			break
		}
		fmt.Fprintf(b, " %d × `%s`;", e.n, strings.ReplaceAll(cut(e.msg, 300), "`", "'"))
	}
	b.WriteString("\n")
}

// met says whether a target was met.
func met(ok bool) string {
	if ok {
		return "met"
	}
	return "missed"
}

// cut shortens s to at most n bytes, on a rune's boundary, marking the cut.
func cut(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n] + "..."
}
