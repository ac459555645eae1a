// Package ctxerr gives a statement the server cancelled for its caller's
// context an error that matches that context's error too. shoalpgx and its
// database/sql driver (shoalpgx/stdlib) return their statements' errors
// through it.
package ctxerr

import (
	"context"
	"errors"

	"github.com/jackc/pgx/v5/pgconn"
)

// QueryCanceled is the SQLSTATE query_canceled, the server's answer to a
// cancel request (and to statement_timeout).
const QueryCanceled = "57014"

// canceledError is the error of a statement the server cancelled after the
// caller's context ended: the server's error, which errors.As finds as a
// *pgconn.PgError, and the context's, which errors.Is finds, as it finds it
// in pgx's error for a connection cut off at a deadline.
type canceledError struct {
	ctxErr error // context.Canceled or context.DeadlineExceeded
	pgErr  error // the server's, SQLSTATE 57014
}

func (e *canceledError) Error() string   { return e.ctxErr.Error() + ": " + e.pgErr.Error() }
func (e *canceledError) Unwrap() []error { return []error{e.ctxErr, e.pgErr} }

// Wrap returns err, made to match ctx.Err() as well when ctx has ended and
// err is the server's query_canceled: what a statement cancelled for its
// caller's context returns. Any other error is returned as it is
// (pgx.ErrNoRows stays comparable with ==).
func Wrap(ctx context.Context, err error) error {
	if err == nil {
		return nil
	}
	ctxErr := ctx.Err()
	if ctxErr == nil {
		return err
	}
	var pe *pgconn.PgError
	if !errors.As(err, &pe) || pe.Code != QueryCanceled || errors.Is(err, ctxErr) {
		return err
	}
	return &canceledError{ctxErr: ctxErr, pgErr: err}
}
