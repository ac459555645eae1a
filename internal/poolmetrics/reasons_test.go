package poolmetrics

import (
	"testing"

	"github.com/shoalpool/shoal"
)

// TestReasonLabels: every reason the core names, at its index, and a copy
// each time.
func TestReasonLabels(t *testing.T) {
	labels := ReasonLabels()
	if labels[0] != "" || len(labels) < 10 {
		t.Fatalf("ReasonLabels() = %v, want \"\" then at least the 9 reasons of today", labels)
	}
	for r, label := range labels[1:] {
		if want := shoal.Reason(r + 1).String(); label != want {
			t.Errorf("label %d = %q, want %q", r+1, label, want)
		}
	}
	labels[1] = "changed"
	if ReasonLabels()[1] == "changed" {
		t.Error("a caller's change reached the next caller")
	}
}
