package shoalpgx

import (
	"context"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// warmPID acquires p's connection, releases it, and returns its backend's
// process id: the connection that the next acquire finds idle.
func warmPID(t *testing.T, p *Pool) uint32 {
	t.Helper()
	c, err := p.Acquire(pgtest.Ctx(t))
	if err != nil {
		t.Fatal(err)
	}
	pid := backendPID(t, c)
	c.Release()
	return pid
}

// Each of PrepareConn's four answers does what pgxpool 5.12 does with it.
func TestPrepareConnAnswers(t *testing.T) {
	errPrepare := errors.New("prepare says no")
	for _, tc := range []struct {
		name string
		ok   bool
		err  error
		// What follows: does the acquire succeed, is the warm connection
		// closed, and does a new one come.
		acquired, closed bool
	}{
		{"true,nil: handed out", true, nil, true, false},
		{"true,err: back to the pool, the acquire fails", true, errPrepare, false, false},
		{"false,err: closed, the acquire fails", false, errPrepare, false, true},
		{"false,nil: closed, the acquire tries another", false, nil, true, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var answer atomic.Bool // answer with tc's values once, then true, nil
			var afterReleases atomic.Int32
			p := newTestPool(t, func(c *Config) {
				c.MaxConns = 2
				c.PrepareConn = func(context.Context, *pgx.Conn) (bool, error) {
					if answer.CompareAndSwap(true, false) {
						return tc.ok, tc.err
					}
					return true, nil
				}
				c.AfterRelease = func(*pgx.Conn) bool { afterReleases.Add(1); return true }
			})
			ctx := pgtest.Ctx(t)
			warm := warmPID(t, p)
			releasesBefore := afterReleases.Load()
			answer.Store(true)
			c, err := p.Acquire(ctx)
			if tc.acquired != (err == nil) {
				t.Fatalf("Acquire: %v, want success %v", err, tc.acquired)
			}
			if err != nil && !errors.Is(err, errPrepare) {
				t.Fatalf("Acquire failed with %v, want PrepareConn's error as it is", err)
			}
			if c != nil {
				if got := backendPID(t, c); (got != warm) != tc.closed {
					t.Errorf("handed out backend %d (warm one %d): want a new one %v", got, warm, tc.closed)
				}
				c.Release()
			}
			if tc.closed {
				// The close may run off the acquiring goroutine.
				pgtest.WaitFor(t, 10*time.Second, "the refused connection closed", func() bool { return p.Stat().Shoal().Closed == 1 })
			} else if s := p.Stat().Shoal(); s.Closed != 0 {
				t.Errorf("stats %+v: want the warm connection kept", s)
			}
			if tc.ok && tc.err != nil {
				if n := afterReleases.Load() - releasesBefore; n != 0 {
					t.Errorf("AfterRelease ran %d times for the connection PrepareConn sent back; pgxpool runs it only for its holders' releases", n)
				}
				if got := warmPID(t, p); got != warm {
					t.Errorf("next acquire got backend %d, want the one PrepareConn sent back (%d)", got, warm)
				}
			}
		})
	}
}

// A PrepareConn that refuses every connection ends the acquire after
// MaxConns+1 of them, as pgxpool's does, instead of looping for ever.
func TestPrepareConnRefusingEverythingEndsTheAcquire(t *testing.T) {
	var calls atomic.Int32
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 2
		c.PrepareConn = func(context.Context, *pgx.Conn) (bool, error) { calls.Add(1); return false, nil }
	})
	_, err := p.Acquire(pgtest.Ctx(t))
	if !errors.Is(err, errAcquireAttempts) {
		t.Fatalf("Acquire: %v, want %v", err, errAcquireAttempts)
	}
	if n := calls.Load(); n != 3 {
		t.Errorf("PrepareConn ran %d times, want MaxConns+1 = 3", n)
	}
	pgtest.WaitFor(t, 10*time.Second, "the 3 refused connections closed", func() bool { return p.Stat().Shoal().Closed == 3 })
	if s := p.Stat().Shoal(); s.InUseConns != 0 {
		t.Errorf("stats %+v: want none held", s)
	}
}

// BeforeAcquire is the deprecated PrepareConn: alone it still refuses
// connections; with PrepareConn set it is ignored, as in pgxpool.
func TestBeforeAcquireIsTheDeprecatedPrepareConn(t *testing.T) {
	t.Run("alone", func(t *testing.T) {
		var refuse atomic.Bool
		p := newTestPool(t, func(c *Config) {
			c.MaxConns = 1
			c.BeforeAcquire = func(context.Context, *pgx.Conn) bool { return !refuse.Swap(false) }
		})
		warm := warmPID(t, p)
		refuse.Store(true)
		if got := warmPID(t, p); got == warm {
			t.Fatalf("BeforeAcquire refused backend %d, and it was handed out", warm)
		}
	})
	t.Run("with PrepareConn", func(t *testing.T) {
		var beforeAcquires, prepares atomic.Int32
		p := newTestPool(t, func(c *Config) {
			c.MaxConns = 1
			c.BeforeAcquire = func(context.Context, *pgx.Conn) bool { beforeAcquires.Add(1); return false }
			c.PrepareConn = func(context.Context, *pgx.Conn) (bool, error) { prepares.Add(1); return true, nil }
		})
		warmPID(t, p)
		warmPID(t, p)
		if b, pr := beforeAcquires.Load(), prepares.Load(); b != 0 || pr != 2 {
			t.Fatalf("BeforeAcquire ran %d times, PrepareConn %d; want 0 and 2", b, pr)
		}
	})
}

// A PrepareConn that panics: the panic reaches the caller, as in pgxpool,
// and its connection is closed rather than left leased for ever.
func TestPrepareConnPanicClosesTheConnection(t *testing.T) {
	var panicNext atomic.Bool
	p := newTestPool(t, func(c *Config) {
		c.MaxConns = 1
		c.PrepareConn = func(context.Context, *pgx.Conn) (bool, error) {
			if panicNext.Swap(false) {
				panic("prepare blew up")
			}
			return true, nil
		}
	})
	warm := warmPID(t, p)
	panicNext.Store(true)
	func() {
		defer func() {
			if r := recover(); r != "prepare blew up" {
				t.Fatalf("recovered %v, want PrepareConn's panic", r)
			}
		}()
		_, _ = p.Acquire(pgtest.Ctx(t))
		t.Fatal("Acquire returned; PrepareConn's panic was swallowed")
	}()
	pgtest.WaitFor(t, 10*time.Second, "the connection closed", func() bool { return p.Stat().Shoal().Closed == 1 })
	if s := p.Stat().Shoal(); s.InUseConns != 0 {
		t.Fatalf("stats %+v: want none held", s)
	}
	if got := warmPID(t, p); got == warm {
		t.Fatalf("the connection whose PrepareConn panicked (%d) was handed out again", warm)
	}
}
