package pgtest

import (
	"context"
	"errors"
	"testing"
	"time"

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
