package shoalpgx

import (
	"testing"
	"testing/synctest"
	"time"
)

// A connection the pool closes counts against MaxConns until the server
// has ended its backend, so that the server never holds more of the
// pool's connections than MaxConns: the backend of a closed connection
// takes a moment to exit after Terminate, and a dial that took its place
// at once would meet it at the server. Whoever closes it: the pool
// (a Reset here), or pgx, which closes a connection whose statement was
// cut off at its deadline (CancelTimeout 0).
func TestServerNeverHoldsMoreThanMaxConns(t *testing.T) {
	for _, tc := range []struct {
		name   string
		cancel time.Duration
		close  func(*testing.T, *Pool)
	}{
		{"Reset", defaultCancelTimeout, func(t *testing.T, p *Pool) { p.Reset() }},
		{"cut off by pgx", 0, func(t *testing.T, p *Pool) {
			if _, err := timedExec(p.Exec, 10*time.Millisecond, "sleep 10s"); err == nil {
				t.Fatal("a statement cut off at its deadline succeeded")
			}
		}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFakePG(t)
				f.exitDelay = 100 * time.Millisecond
				p := fakePool(t, f, func(c *Config) { c.CancelTimeout = tc.cancel })
				tc.close(t, p)
				if _, err := timedExec(p.Exec, 0, "select"); err != nil {
					t.Fatal(err)
				}
				if n := f.logins.Load(); n != 2 {
					t.Fatalf("%d sessions, want 2: the first closed, then a new one", n)
				}
				if n := f.maxLive.Load(); n != 1 {
					t.Errorf("the server held %d of the pool's sessions at once, MaxConns is 1", n)
				}
			})
		})
	}
}
