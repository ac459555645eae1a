package main

import (
	"context"
	"fmt"
	"io"
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
