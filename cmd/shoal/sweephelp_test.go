package main

import (
	"strings"
	"testing"
)

// TestSweepHelpSaysWhatItsOutputMeans: `shoal help` promises a command's
// flags and what its output means; for sweep, that means its rounds table
// and the recommendation it ends with, or its "keep the default".
func TestSweepHelpSaysWhatItsOutputMeans(t *testing.T) {
	r := runShoal(t, "help")
	r.wantCode(t, exitOK)
	if !strings.Contains(r.stdout, "what its output means") {
		t.Fatalf("the help no longer promises what a command's output means:\n%s", r.stdout)
	}
	r = runShoal(t, "help", "sweep")
	r.wantCode(t, exitOK)
	_, output, ok := strings.Cut(r.stdout, "\noutput:\n")
	output = strings.Join(strings.Fields(output), " ")
	for _, want := range []string{"round by round", "recommendation", "connection string", "keep the default"} {
		if !ok || !strings.Contains(output, want) {
			t.Errorf("help sweep has no output section that names %q:\n%s", want, r.stdout)
		}
	}
}
