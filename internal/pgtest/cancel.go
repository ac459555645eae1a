package pgtest

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// AbandonAfter is how long the tests' abandoned statements run before
// their context ends: long enough for the statement to reach the server
// (so that the cancel finds it running), far shorter than the sleep.
const AbandonAfter = 50 * time.Millisecond

// AbandonedCtx is a context that ends AbandonAfter from now.
func AbandonedCtx(t testing.TB) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), AbandonAfter)
	t.Cleanup(cancel)
	return ctx
}

// CheckCanceled fails the test unless err is a statement cancelled at the
// server for its context: it matches ctx.Err() and holds a *pgconn.PgError
// with SQLSTATE 57014.
func CheckCanceled(t testing.TB, what string, ctx context.Context, err error) {
	t.Helper()
	if err == nil {
		t.Fatalf("%s: no error from a statement abandoned mid-flight", what)
	}
	if ctx.Err() == nil || !errors.Is(err, ctx.Err()) {
		t.Errorf("%s: errors.Is(err, ctx.Err()) is false for %v (ctx.Err() = %v)", what, err, ctx.Err())
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != "57014" {
		t.Errorf("%s: the error holds no *pgconn.PgError with SQLSTATE 57014: %v", what, err)
	}
}

// SleepingCtx is a context cancelled once the server shows one of the
// backends in pids waiting in pg_sleep (wait event PgSleep): the statement is
// abandoned while it runs, however long the steps before it (a dial, a
// Begin) take on a loaded machine. admin polls pg_stat_activity, and is
// not the caller's to use until the context has ended. If no backend is
// seen sleeping within 20s the context ends anyway and the test fails.
func SleepingCtx(t testing.TB, admin *pgx.Conn, pids ...uint32) context.Context {
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	t.Cleanup(func() { <-done })
	t.Cleanup(cancel) // runs first: a test that ended early stops the polling
	go func() {
		defer close(done)
		defer cancel()
		const q = "SELECT coalesce(bool_or(wait_event = 'PgSleep'), false) FROM pg_stat_activity WHERE pid = ANY($1)"
		deadline := time.Now().Add(20 * time.Second)
		for ctx.Err() == nil {
			var sleeping bool
			poll, stop := context.WithDeadline(context.Background(), deadline)
			err := admin.QueryRow(poll, q, pids).Scan(&sleeping)
			stop()
			switch {
			case err == nil && sleeping:
				return
			case time.Now().After(deadline):
				t.Errorf("none of backends %v seen in pg_sleep within 20s (last poll: %v)", pids, err)
				return
			case err != nil:
				t.Errorf("polling pg_stat_activity for backends %v: %v", pids, err)
				return
			}
			time.Sleep(time.Millisecond)
		}
	}()
	return ctx
}
