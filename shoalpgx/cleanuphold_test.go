package shoalpgx

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"
)

// A connection pgx closed itself (its statement's context ended) keeps its
// place under MaxConns until pgx's cleanup has ended, so that the server
// never counts more of the pool's connections than MaxConns, and
// cleanupHold at most, so that a silent server does not keep a place from a
// dial that could reach another host.

// A server that answers neither the statement nor the cancel request: the
// caller returns CancelTimeout after its deadline, with its context's
// error, and the connection is closed. pgx's cleanup of it cannot finish
// against a silent server, and its place under MaxConns is held for
// cleanupHold, then freed.
func TestCleanupHoldFakeSilentServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakePG(t)
		p := fakePool(t, f, nil)
		f.silent.Store(true)
		took, err := timedExec(p.Exec, 10*time.Millisecond, "select")
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want an error matching context.DeadlineExceeded", err)
		}
		if want := 10*time.Millisecond + defaultCancelTimeout; took != want {
			t.Errorf("the statement returned after %s, want %s (its deadline and CancelTimeout)", took, want)
		}
		synctest.Wait()
		if s := p.Stat().Shoal(); s.Closing != 1 {
			t.Fatalf("right after: %+v, want the connection closing, its place held", s)
		}
		time.Sleep(cleanupHold - time.Nanosecond)
		synctest.Wait()
		if s := p.Stat().Shoal(); s.Closing != 1 {
			t.Fatalf("just before cleanupHold: %+v, want its place still held", s)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if s := p.Stat().Shoal(); s.Closing != 0 || s.TotalConns != 0 || s.Closed != 1 {
			t.Fatalf("at cleanupHold: %+v, want the place freed", s)
		}
	})
}

// With CancelTimeout 0 pgx closes the connection at the deadline, as its
// default handler does, and cleans up (a cancel request, Terminate, the
// server's hang-up) on its own goroutine: the connection keeps its place
// under MaxConns until that ends, 20ms later, not longer.
func TestCleanupHoldFakeUntilCleanup(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakePG(t)
		f.signalDelay = 20 * time.Millisecond
		p := fakePool(t, f, func(c *Config) { c.CancelTimeout = 0 })
		took, err := timedExec(p.Exec, 10*time.Millisecond, "sleep 10s")
		if !errors.Is(err, context.DeadlineExceeded) || took != 10*time.Millisecond {
			t.Fatalf("got %v after %s, want an error matching context.DeadlineExceeded at the deadline", err, took)
		}
		synctest.Wait()
		if s := p.Stat().Shoal(); s.Closing != 1 {
			t.Fatalf("right after: %+v, want the connection closing, its place held", s)
		}
		time.Sleep(20 * time.Millisecond)
		synctest.Wait()
		if s := p.Stat().Shoal(); s.Closing != 0 || s.TotalConns != 0 || s.Closed != 1 {
			t.Fatalf("once pgx's cleanup ended: %+v, want the place freed", s)
		}
	})
}

// The load of TestCancelLoadHoldsMaxConnsAtTheServer with CancelTimeout 0:
// pgx closes every connection whose statement is abandoned, and the pool
// dials new ones; the server still never holds more than MaxConns of them.
func TestCleanupHoldLoadHoldsMaxConnsAtTheServer(t *testing.T) {
	abandonUnderLoad(t, 0)
}

// A server that answers, only slowly: the backend of a connection pgx
// closed takes longer than cleanupHold to exit after Terminate (a loaded
// machine, a session with many temporary tables to drop). It answered the
// cancel request of pgx's cleanup, so it is not silent, and the place stays
// held until the backend is gone: a dial that took it at cleanupHold met
// the old backend at the server, one above MaxConns.
func TestCleanupHoldFakeAnsweringServer(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakePG(t)
		f.exitDelay = cleanupHold + 200*time.Millisecond
		p := fakePool(t, f, func(c *Config) { c.CancelTimeout = 0 })
		if _, err := timedExec(p.Exec, 10*time.Millisecond, "sleep 10s"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want an error matching context.DeadlineExceeded", err)
		}
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
}

// A server that answered but never lets the backend go keeps the place
// closeTimeout at most, as a close of the pool's own does.
func TestCleanupHoldFakeAnsweringServerBounded(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakePG(t)
		f.exitDelay = 3 * closeTimeout
		p := fakePool(t, f, func(c *Config) { c.CancelTimeout = 0 })
		if _, err := timedExec(p.Exec, 10*time.Millisecond, "sleep 10s"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want an error matching context.DeadlineExceeded", err)
		}
		synctest.Wait()
		time.Sleep(closeTimeout - time.Nanosecond)
		synctest.Wait()
		if s := p.Stat().Shoal(); s.Closing != 1 {
			t.Fatalf("just before closeTimeout: %+v, want its place still held", s)
		}
		time.Sleep(time.Nanosecond)
		synctest.Wait()
		if s := p.Stat().Shoal(); s.Closing != 0 || s.TotalConns != 0 || s.Closed != 1 {
			t.Fatalf("at closeTimeout: %+v, want the place freed", s)
		}
	})
}
