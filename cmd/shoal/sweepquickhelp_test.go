package main

import (
	"fmt"
	"strings"
	"testing"
)

// TestSweepQuickHelpSaysAllItChanges: `shoal help sweep` says everything
// --quick changes in a sweep, the rounds and the configurations too, not
// only the windows: a user reading it would otherwise not know that the
// quarter of --max-conns is left out.
func TestSweepQuickHelpSaysAllItChanges(t *testing.T) {
	r := runShoal(t, "help", "sweep")
	r.wantCode(t, exitOK)
	var line string
	for _, l := range strings.Split(r.stdout, "\n") {
		if strings.HasPrefix(strings.TrimSpace(l), "--quick") {
			line = l
		}
	}
	o, err := parseFlags("sweep", []string{"--target", "postgres://u@h/db", "--quick", "--max-conns", "8"})
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"--duration " + o.duration.String(),
		"--warmup " + o.warmup.String(),
		fmt.Sprintf("--rounds %d", o.rounds),
		"half and all of --max-conns",
	} {
		if !strings.Contains(line, want) {
			t.Errorf("the --quick line lacks %q: %q", want, line)
		}
	}
	if totals := sweepTotals(8, true); len(totals) != 2 || totals[0] != 4 || totals[1] != 8 {
		t.Errorf("--quick --max-conns 8 sweeps %v connections, not half and all", totals)
	}
}
