package main

import (
	"strings"
	"testing"
)

// TestDialTimeoutIsBounded guards --dial-timeout against values whose
// derived set-up timeout (four times it) overflows and silently becomes
// the 20s floor: they are a usage error, as for --duration.
func TestDialTimeoutIsBounded(t *testing.T) {
	for _, cmd := range []string{"bench", "sweep"} {
		_, err := parseFlags(cmd, []string{"--target", "postgres://h/db", "--dial-timeout", "1000000h"})
		if err == nil || !strings.Contains(err.Error(), "--dial-timeout") {
			t.Errorf("%s --dial-timeout 1000000h: error %v, want one naming --dial-timeout", cmd, err)
		}
	}
	o, err := parseFlags("bench", []string{"--dial-timeout", maxDuration.String()})
	if err != nil {
		t.Fatal(err)
	}
	if s := settingsFor(o); s.SetupTimeout < o.dialTimeout || s.OpTimeout < o.dialTimeout {
		t.Errorf("--dial-timeout %s: set-up timeout %s, operation timeout %s", o.dialTimeout, s.SetupTimeout, s.OpTimeout)
	}
}
