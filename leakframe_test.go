package shoal

import "testing"

// TestInAdapter: a leak report skips the module's own packages when it
// names the holder, but not their external tests, which use the pool as a
// program does, nor a program whose path merely starts alike.
func TestInAdapter(t *testing.T) {
	for fn, want := range map[string]bool{
		"github.com/shoalpool/shoal/shoalhttp.(*Transport).RoundTrip": true,
		"github.com/shoalpool/shoal/shoalpgx.(*Pool).Acquire":         true,
		"github.com/shoalpool/shoal/internal/peek.(*Peeker).Peek":     true,
		"github.com/shoalpool/shoal/shoalhttp_test.forgetBody":        false,
		"github.com/shoalpool/shoalfork.main":                         false,
		"github.com/shoalpool/shoal_test.leakyAcquirer":               false,
		"main.handle": false,
	} {
		if got := inAdapter(fn); got != want {
			t.Errorf("inAdapter(%q) = %v, want %v", fn, got, want)
		}
	}
}
