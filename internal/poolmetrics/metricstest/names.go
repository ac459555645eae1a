package metricstest

import (
	"errors"
	"testing"
)

// testPoolNames: a name must be non-empty, valid UTF-8 and not in use; it
// is free again after Unregister.
func testPoolNames(t *testing.T, b Backend) {
	set := b.New(t)
	if _, err := set.Pool(""); err == nil {
		t.Error("empty name accepted")
	}
	if _, err := set.Pool("\xff"); err == nil {
		t.Error("invalid UTF-8 accepted")
	}
	a := register(t, set, "a")
	if _, err := set.Pool("a"); !errors.Is(err, b.ErrDuplicatePool) {
		t.Errorf("duplicate name: got %v, want ErrDuplicatePool", err)
	}
	a.Unregister()
	a.Unregister() // a second call does nothing
	register(t, set, "a")
}
