package shoalpgx

import (
	"context"
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/shoalpool/shoal/shoalpgx/internal/ctxerr"
)

// The tests here run the pool against fakePG under testing/synctest, so
// that when things happen is exact: the bubble's clock moves only when
// every goroutine waits.

// fakePool opens a pool of one connection on f and closes it at the end
// of the bubble's function.
func fakePool(t *testing.T, f *fakePG, mutate func(*Config)) *Pool {
	t.Helper()
	p, err := NewWithConfig(context.Background(), f.config(t, func(c *Config) {
		c.MaxConns = 1
		if mutate != nil {
			mutate(c)
		}
	}))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Close)
	if err := p.Ping(context.Background()); err != nil {
		t.Fatal(err)
	}
	return p
}

// quickCancelPool is fakePool on a fake server whose cancel requests take
// effect 1ms after they are sent.
func quickCancelPool(t *testing.T) (*fakePG, *Pool) {
	t.Helper()
	f := newFakePG(t)
	f.signalDelay = time.Millisecond
	return f, fakePool(t, f, nil)
}

// execFunc is the Exec of a Pool or of a Conn.
type execFunc = func(context.Context, string, ...any) (pgconn.CommandTag, error)

// poolOrHeld are the two ways a statement reaches a connection, for the
// tests that run through each: the pool's Exec, and a held Conn's.
var poolOrHeld = []struct {
	name string
	held bool
}{{"pool", false}, {"held", true}}

// execVia returns p.Exec, or with held the Exec of a connection acquired
// from p and released when the test ends, with that connection.
func execVia(t *testing.T, p *Pool, held bool) (execFunc, *Conn) {
	t.Helper()
	if !held {
		return p.Exec, nil
	}
	c, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Release)
	return c.Exec, c
}

// timedExec runs sql with a context that ends after d (none for d 0) and
// returns its error and how long it took.
func timedExec(exec execFunc, d time.Duration, sql string) (time.Duration, error) {
	ctx := context.Background()
	if d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	start := time.Now()
	_, err := exec(ctx, sql)
	if err != nil && ctx.Err() != nil && !errors.Is(err, ctx.Err()) {
		err = errors.Join(err, errors.New("the error does not match the context's"))
	}
	return time.Since(start), err
}

// A statement whose context ends returns with the server's answer to the
// cancel request, one signal delay after the deadline, with an error that
// matches both; the connection stays.
func TestCancelFakeAnswered(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, p := quickCancelPool(t)
		took, err := timedExec(p.Exec, 10*time.Millisecond, "sleep 10s")
		var pe *pgconn.PgError
		if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &pe) || pe.Code != ctxerr.QueryCanceled {
			t.Fatalf("got %v, want an error matching context.DeadlineExceeded and SQLSTATE 57014", err)
		}
		if want := 11 * time.Millisecond; took != want {
			t.Errorf("the statement returned after %s, want %s (its deadline, then the server's answer)", took, want)
		}
		stillOneSession(t, f, p.Exec)
	})
}

// A cancel request that reaches the server after its statement finished
// (here the statement ends at 20ms and the signal comes at 60ms) must not
// cancel the connection's next statement: the connection is held back
// until the server has acknowledged the request, whether the next
// statement comes through the pool or from the connection's holder.
func TestCancelFakeLateCancelSparesTheNextStatement(t *testing.T) {
	for _, via := range poolOrHeld {
		t.Run(via.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFakePG(t)
				f.signalDelay = 50 * time.Millisecond
				p := fakePool(t, f, nil)
				exec, _ := execVia(t, p, via.held)
				took, err := timedExec(exec, 10*time.Millisecond, "sleep 20ms")
				if err != nil || took != 20*time.Millisecond {
					t.Fatalf("a statement the server finished before the cancel came: %v after %s, want success after 20ms", err, took)
				}
				took, err = timedExec(exec, 0, "sleep 100ms")
				if err != nil {
					t.Fatalf("the next statement, whose context did not end, failed: %v", err)
				}
				// It waited for the acknowledgement, at 60ms.
				if want := 140 * time.Millisecond; took != want {
					t.Errorf("the next statement took %s, want %s: 40ms held back, then 100ms", took, want)
				}
				if n := f.cancels.Load(); n != 1 {
					t.Errorf("%d cancel requests, want 1", n)
				}
			})
		})
	}
}

// A server that answers neither the statement nor the cancel request: the
// caller returns CancelTimeout after its deadline, with its context's
// error, and the connection is closed.
func TestCancelFakeSilentServer(t *testing.T) {
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
		time.Sleep(closeTimeout)
		synctest.Wait()
		if s := p.Stat().Shoal(); s.Closing != 0 || s.TotalConns != 0 || s.Closed != 1 {
			t.Fatalf("%+v, want the connection closed", s)
		}
	})
}

// A statement that ignores the first cancel (as PL/pgSQL catching
// query_canceled does, or a request that reached the backend before the
// statement did) gets another one cancelRetry after the first was
// acknowledged.
func TestCancelFakeRetries(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, p := quickCancelPool(t)
		took, err := timedExec(p.Exec, 10*time.Millisecond, "swallow 10s")
		var pe *pgconn.PgError
		if !errors.Is(err, context.DeadlineExceeded) || !errors.As(err, &pe) {
			t.Fatalf("got %v, want an error matching context.DeadlineExceeded and SQLSTATE 57014", err)
		}
		if want := 10*time.Millisecond + time.Millisecond + cancelRetry + time.Millisecond; took != want {
			t.Errorf("the statement returned after %s, want %s", took, want)
		}
		if n := f.cancels.Load(); n != 2 {
			t.Errorf("%d cancel requests, want 2", n)
		}
	})
}

// Waiting for a notification is not a statement: when its context ends
// there is nothing to cancel, so no request is sent and the wait returns at
// the deadline, as with pgx's default handler, on a connection pgx keeps.
func TestCancelFakeNothingRunning(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakePG(t)
		p := fakePool(t, f, nil)
		c, err := p.Acquire(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		defer c.Release()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		start := time.Now()
		err = c.Conn().PgConn().WaitForNotification(ctx)
		if took := time.Since(start); !errors.Is(err, context.DeadlineExceeded) || took != 10*time.Millisecond {
			t.Errorf("WaitForNotification returned %v after %s, want context.DeadlineExceeded at the deadline", err, took)
		}
		if n := f.cancels.Load(); n != 0 {
			t.Errorf("%d cancel requests for an idle session, want none", n)
		}
		if _, err := c.Exec(context.Background(), "select"); err != nil {
			t.Errorf("the connection after the wait: %v", err)
		}
	})
}

// A pool transaction whose statement was cancelled, then rolled back with
// the same, ended, context (a deferred Rollback): pgx would close the
// connection; the pool rolls back in the background and keeps it.
func TestCancelFakeRollbackAfterTheDeadline(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, p := quickCancelPool(t)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Millisecond)
		defer cancel()
		tx, err := p.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec(ctx, "sleep 10s"); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("got %v, want an error matching context.DeadlineExceeded", err)
		}
		if err := tx.Rollback(ctx); !errors.Is(err, context.DeadlineExceeded) || !pgconn.Timeout(err) {
			t.Errorf("Rollback with an ended context returned %v, want pgx's error for that", err)
		}
		if err := tx.Rollback(context.Background()); !errors.Is(err, pgx.ErrTxClosed) {
			t.Errorf("a second Rollback returned %v, want pgx.ErrTxClosed", err)
		}
		stillOneSession(t, f, p.Exec)
	})
}

// cancelRig acquires a connection of a pool on a fake server whose cancel
// requests take effect 1ms after they are sent, and returns it with its
// canceler, for tests that play pgx's part in a cancellation.
func cancelRig(t *testing.T) (*fakePG, *Conn, *canceler) {
	t.Helper()
	f, p := quickCancelPool(t)
	c, err := p.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(c.Release)
	if c.pc.cancel == nil {
		t.Fatal("the pool's connection has no canceler")
	}
	return f, c, c.pc.cancel
}

// wantCancelledIn1ms checks that what was cancelled by the server
// (SQLSTATE 57014) 1ms after start, the fake server's signal delay: the
// cancel request went out as soon as the statement was written.
func wantCancelledIn1ms(t *testing.T, what string, err error, start time.Time) {
	t.Helper()
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != ctxerr.QueryCanceled {
		t.Fatalf("%s returned %v, want SQLSTATE 57014", what, err)
	}
	if took := time.Since(start); took != time.Millisecond {
		t.Errorf("%s was cancelled after %s, want 1ms (the request sent once it was written)", what, took)
	}
}

// stillOneSession checks that exec (a pool's or a held connection's),
// after a cancellation, runs a statement on the session the connection
// had: one login at the fake server, the cancellation cost no connection.
func stillOneSession(t *testing.T, f *fakePG, exec execFunc) {
	t.Helper()
	if _, err := timedExec(exec, 0, "select"); err != nil {
		t.Fatalf("the connection after the cancellation: %v", err)
	}
	if n := f.logins.Load(); n != 1 {
		t.Errorf("%d sessions, want 1: the cancellation cost the connection", n)
	}
}

// A context that ends between an operation's start and its first write
// finds nothing written since the server's last ReadyForQuery, and cuts the
// connection off as for a wait on the server; when the write comes after
// all, the gate turns that into a cancellation of the statement it wrote,
// and the connection stays. (pgx gives no way to end a context at that
// instant, so the test plays pgx's part: HandleCancel, the statement,
// HandleUnwatchAfterCancel.)
func TestCancelFakeWriteAfterTheCut(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c, h := cancelRig(t)
		h.HandleCancel(context.Background())
		start := time.Now()
		_, err := c.Conn().PgConn().Exec(context.Background(), "sleep 10s").ReadAll()
		h.HandleUnwatchAfterCancel()
		wantCancelledIn1ms(t, "the statement written after the cut", err, start)
		stillOneSession(t, f, c.Exec)
	})
}

// A context that ends as the operation's first write begins: HandleCancel
// stores cut and then looks at busy, the gate's Write stores busy and then
// looks at cut, and a statement written between HandleCancel's two steps
// must still be cancelled, not cut off once at the server (where it may
// commit while its caller gets a timeout). The test plays pgx's part, as
// above, and writes the statement from inside HandleCancel.
func TestCancelFakeWriteDuringTheCancel(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f, c, h := cancelRig(t)
		done := make(chan error, 1)
		h.afterCut = func() {
			go func() {
				_, err := c.Conn().PgConn().Exec(context.Background(), "sleep 10s").ReadAll()
				done <- err
			}()
			synctest.Wait() // written, and waiting for its answer
		}
		h.HandleCancel(context.Background())
		h.afterCut = nil
		start := time.Now()
		err := <-done
		h.HandleUnwatchAfterCancel()
		wantCancelledIn1ms(t, "the statement written during HandleCancel", err, start)
		stillOneSession(t, f, c.Exec)
	})
}

// A server that answers statements but never acknowledges a cancel
// request: the request may land at any time, so once it is given up on
// (CancelTimeout after the deadline) the connection runs nothing more. The
// pool closes it instead of taking it back; its holder's next statement
// waits for the verdict and is refused, and pgx closes the connection.
func TestCancelFakeUnacknowledged(t *testing.T) {
	for _, via := range poolOrHeld {
		t.Run(via.name, func(t *testing.T) {
			synctest.Test(t, func(t *testing.T) {
				f := newFakePG(t)
				p := fakePool(t, f, nil)
				f.ignoreCancels.Store(true)
				exec, c := execVia(t, p, via.held)
				took, err := timedExec(exec, 10*time.Millisecond, "sleep 20ms")
				if err != nil || took != 20*time.Millisecond {
					t.Fatalf("a statement the server finished: %v after %s, want success after 20ms", err, took)
				}
				took, err = timedExec(exec, 0, "select")
				want := 10*time.Millisecond + defaultCancelTimeout - 20*time.Millisecond
				if via.held {
					if !errors.Is(err, errCancelUnacknowledged) || took != want {
						t.Fatalf("the holder's next statement: %v after %s, want the gate's refusal after %s", err, took, want)
					}
					if !c.Conn().IsClosed() {
						t.Error("pgx kept the connection after the refusal")
					}
					return
				}
				if err != nil || took != want {
					t.Fatalf("the pool's next statement: %v after %s, want success on a new connection after %s", err, took, want)
				}
				if n := f.logins.Load(); n != 2 {
					t.Errorf("%d sessions, want 2: the connection with a request that may still land was reused", n)
				}
			})
		})
	}
}

// Large objects of a transaction that has ended fail as pgx's do, and do
// not reach the connection, which may be rolling back in the background or
// be another holder's by then.
func TestCancelFakeLargeObjectsAfterTheEnd(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		f := newFakePG(t)
		p := fakePool(t, f, nil)
		ctx, cancel := context.WithCancel(context.Background())
		tx, err := p.Begin(ctx)
		if err != nil {
			t.Fatal(err)
		}
		cancel()
		_ = tx.Rollback(ctx) // left to the background
		lo := tx.LargeObjects()
		if _, err := lo.Create(context.Background(), 0); !errors.Is(err, pgx.ErrTxClosed) {
			t.Errorf("large objects of an ended transaction: %v, want pgx.ErrTxClosed", err)
		}
	})
}
