package main

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestRelativeChartPathNamedInFull: a relative --chart is relative to
// the directory shoal runs in, which under "go -C cmd/shoal run ." is not
// the user's: the note that the chart was written, and the error for a
// directory that does not exist, name the path in full.
func TestRelativeChartPathNamedInFull(t *testing.T) {
	dir := t.TempDir()
	t.Chdir(dir)
	r := runShoal(t, append([]string{"bench", "--only", "churn", "--workers", "1", "--chart", "rel.svg"}, benchTimes...)...)
	r.wantCode(t, exitOK)
	if want := "Chart written to " + filepath.Join(dir, "rel.svg"); !strings.Contains(r.stderr, want) {
		t.Errorf("stderr does not say %q:\n%s", want, r.stderr)
	}
	r = runShoal(t, "bench", "--chart", filepath.Join("nope", "rel.svg"))
	r.wantCode(t, exitUsage)
	if want := filepath.Join(dir, "nope"); !strings.Contains(r.stderr, want) {
		t.Errorf("stderr does not name the missing directory %q in full:\n%s", want, r.stderr)
	}
}
