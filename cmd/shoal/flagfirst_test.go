package main

import (
	"strings"
	"testing"
)

// TestFlagBeforeTheCommand: `shoal --quick bench` says that flags go after
// the command, with the line it meant, not only that "--quick" is an
// unknown command.
func TestFlagBeforeTheCommand(t *testing.T) {
	r := runShoal(t, "--quick", "bench")
	r.wantCode(t, exitUsage)
	first, _, _ := strings.Cut(r.stderr, "\n")
	if want := "flags go after the command: shoal bench --quick"; !strings.Contains(first, want) {
		t.Errorf("want %q, got:\n%s", want, r.stderr)
	}
}
