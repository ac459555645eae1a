package shoalpgx

import (
	"testing"
	"time"
)

// settle waits until no close the pool started is still running: the core
// closes connections on goroutines of their own, after the Release or
// Discard that let them go has returned.
func settle(t testing.TB, p *Pool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for p.Stats().Closing != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("closes still running after 10s: %v", p.Stats())
		}
		time.Sleep(time.Millisecond)
	}
}
