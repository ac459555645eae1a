package mdtable

import (
	"strings"
	"testing"
)

func TestHeader(t *testing.T) {
	var b strings.Builder
	Header(&b, "query", "workers", "a q/s")
	if got, want := b.String(), "| query | workers | a q/s |\n|---|---:|---:|\n"; got != want {
		t.Fatalf("Header = %q, want %q", got, want)
	}
}
