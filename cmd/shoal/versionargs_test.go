package main

import (
	"strings"
	"testing"
)

// TestVersionTakesNoArguments: `shoal version --json` is refused as a
// usage error naming what was wrong, not answered with the plain version
// and status 0 as if the flag had been read; -h shows the usage.
func TestVersionTakesNoArguments(t *testing.T) {
	for _, args := range [][]string{{"version", "--json"}, {"version", "extra"}, {"--version", "-x"}} {
		r := runShoal(t, args...)
		r.wantCode(t, exitUsage)
		first, _, _ := strings.Cut(r.stderr, "\n")
		if !strings.Contains(first, "takes no arguments") || !strings.Contains(first, args[1]) || r.stdout != "" {
			t.Errorf("%q: stdout %q, stderr:\n%s", args, r.stdout, r.stderr)
		}
	}
	r := runShoal(t, "version", "-h")
	r.wantCode(t, exitOK)
	if r.stdout != versionUsage {
		t.Errorf("version -h:\n%s", r.stdout)
	}
}
