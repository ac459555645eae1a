package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TestChartThatIsADirectory: a --chart that names a directory is refused
// before anything runs, as a missing directory is, rather than after the
// whole run with the error of renaming a temporary file over it.
func TestChartThatIsADirectory(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "charts.svg")
	if err := os.Mkdir(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	for _, cmd := range []string{"bench", "sweep"} {
		r := runShoal(t, cmd, "--target", "postgres://u@127.0.0.1:1/db", "--chart", dir)
		r.wantCode(t, exitUsage)
		first, _, _ := strings.Cut(r.stderr, "\n")
		if want := dir + `" is a directory`; !strings.Contains(first, want) {
			t.Errorf("%s: want %q, got:\n%s", cmd, want, r.stderr)
		}
	}
}
