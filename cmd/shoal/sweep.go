package main

import (
	"context"
	"fmt"
	"io"
)

// runSweep is `shoal sweep`.
func runSweep(ctx context.Context, o *options, stdout, stderr io.Writer) int {
	t, err := parseTarget(o.target)
	if err != nil {
		fmt.Fprintf(stderr, "shoal sweep: %s\n", redactRaw(err.Error()))
		return exitUsage
	}
	out, errOut := scrubWriter{stdout, t}, scrubWriter{stderr, t}
	if t.Kind != targetPostgres {
		fmt.Fprintf(errOut, "shoal sweep: --target %s: sweep needs a postgres:// target\n", t.Redacted)
		return exitUsage
	}
	if newShoalPGX == nil {
		fmt.Fprintf(errOut, "shoal sweep: not available yet — %s\n", notLanded("shoalpgx"))
		return exitFailed
	}
	_ = out
	_ = ctx
	return exitFailed
}
