package main

import (
	"fmt"
	"io"
)

// printed writes text, the help or the version, to stdout for the command
// cmd, and picks the exit status: 0, or 1 when the write failed (a full
// disk), said on stderr. Unchecked, such a write ended with status 0 and
// nothing printed, while a run whose results could not be written fails.
func printed(stdout, stderr io.Writer, cmd, what, text string) int {
	if _, err := io.WriteString(stdout, text); err != nil {
		fmt.Fprintf(stderr, "shoal %s: writing the %s: %v\n", cmd, what, err)
		return exitFailed
	}
	return exitOK
}
