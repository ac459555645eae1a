package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// TestHelpAndVersionThatCannotBeWrittenFail: help, a command's -h and
// version fail with status 1 and the write's error when stdout takes
// nothing (a full disk), as a run whose results could not be written
// does, rather than ending with status 0 and nothing printed.
func TestHelpAndVersionThatCannotBeWrittenFail(t *testing.T) {
	for _, args := range [][]string{
		{"help"}, {"-h"}, {"--help"}, {"help", "bench"}, {"help", "sweep"}, {"help", "budget"}, {"help", "version"}, {"help", "help"},
		{"bench", "-h"}, {"sweep", "--help"}, {"budget", "-h"},
		{"version"}, {"--version"}, {"version", "-h"},
	} {
		var stderr bytes.Buffer
		code := run(context.Background(), args, fullDisk{}, &stderr)
		if code != exitFailed || !strings.HasPrefix(stderr.String(), "shoal ") || !strings.Contains(stderr.String(), "no space left on device") {
			t.Errorf("%q: exit status %d, want %d, and the write's error on stderr:\n%s", args, code, exitFailed, stderr.String())
		}
	}
}
