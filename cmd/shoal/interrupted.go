package main

import (
	"context"
	"fmt"
	"io"

	"github.com/shoalpool/shoal/internal/benchrun"
)

// interruptedEarly reports whether Ctrl-C (ctx's end) came while the
// command was still reaching the target, and if so says so on errOut.
// The error the wait itself returned is not printed: it would name a
// cancelled dial or query, or a timeout that never ran out, as what went
// wrong.
func interruptedEarly(ctx context.Context, cmd string, errOut io.Writer) bool {
	if ctx.Err() == nil {
		return false
	}
	fmt.Fprintf(errOut, "shoal %s: interrupted before anything was measured\n", cmd)
	return true
}

// interruptedNote is what finish says of a run that Ctrl-C ended: where
// the results that finished went, or that there are none. "Above" is
// true only of tables that were written: JSON and CSV are on stdout,
// which is often a file or a pipe.
func interruptedNote(o *options, report *benchrun.Report, out *outputWriter) string {
	switch {
	case !report.Measured():
		return "interrupted before anything was measured"
	case out.err != nil:
		return "interrupted; the results that finished could not be written"
	case o.json:
		return "interrupted; the JSON on stdout holds the results that finished"
	case o.csv:
		return "interrupted; the CSV on stdout holds the results that finished"
	}
	return "interrupted; the results above are those that finished"
}
