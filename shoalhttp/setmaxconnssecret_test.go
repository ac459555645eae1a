package shoalhttp

import (
	"strings"
	"testing"
)

// TestSetMaxConnsErrorHidesPassword guards SetMaxConns' refusal of a bad
// n: it names the origin without the userinfo or query it was written with.
func TestSetMaxConnsErrorHidesPassword(t *testing.T) {
	tr := newTestTransport(t, Options{})
	err := tr.SetMaxConns("https://user:s3cret@example.com/?password=hunter2", 0)
	if err == nil {
		t.Fatal("SetMaxConns(..., 0) = nil, want an error")
	}
	msg := err.Error()
	if strings.Contains(msg, "s3cret") || strings.Contains(msg, "hunter2") {
		t.Fatalf("error shows a password: %v", err)
	}
	if want := "SetMaxConns(https://example.com:443, 0): must be in [1, 2147483647]"; !strings.Contains(msg, want) {
		t.Fatalf("error = %q, want it to contain %q", msg, want)
	}
}
