package main

import (
	"strings"
	"testing"
)

// TestBudgetHelpDefaultsAreTheFlags: the budget's help is written by
// hand, not from its flag set; the defaults it names are those a budget
// read without the flags gets.
func TestBudgetHelpDefaultsAreTheFlags(t *testing.T) {
	o, err := parseBudgetFlags([]string{"db", "--etcd", "127.0.0.1:2379"})
	if err != nil {
		t.Fatal(err)
	}
	lines := map[string]string{}
	for _, l := range strings.Split(budgetUsage, "\n") {
		if f := strings.Fields(l); len(f) > 0 && strings.HasPrefix(f[0], "--") {
			lines[f[0]] = l
		}
	}
	for flag, def := range map[string]string{"--interval": o.interval.String(), "--prefix": o.prefix, "--timeout": o.timeout.String()} {
		if want := "(default " + def + ")"; !strings.HasSuffix(lines[flag], want) {
			t.Errorf("help budget: the %s line does not end %q: %q", flag, want, lines[flag])
		}
	}
}
