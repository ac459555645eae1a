package shoalgrpc

import (
	"context"
	"errors"
	"strings"

	"github.com/shoalpool/shoal"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// PoolError is returned by a call that could not get a stream slot: the
// pool is closed, the caller's context ended while it waited, the wait
// queue was full, or no connection could be opened. It carries the gRPC
// code a grpc.ClientConn would have given for the same cause, so
// status.Code(err) works, and it wraps the cause, so errors.Is(err,
// context.DeadlineExceeded) or errors.Is(err, shoal.ErrClosed) work too.
type PoolError struct {
	Code codes.Code // the gRPC code that fits the cause
	Err  error      // the cause, usually a *shoal.AcquireError
}

// Error says what the call waited for and why it gave up. The package is
// named once: the core's "shoal" gives way to "shoalgrpc" (`shoalgrpc pool
// "orders": acquire: ...`), and the pool's dial errors carry no prefix of
// their own (conn.go).
func (e *PoolError) Error() string {
	msg := e.Err.Error()
	if rest, ok := strings.CutPrefix(msg, "shoal pool "); ok {
		return "shoalgrpc pool " + rest
	}
	return "shoalgrpc: " + strings.TrimPrefix(msg, "shoal: ")
}

// Unwrap returns the cause.
func (e *PoolError) Unwrap() error { return e.Err }

// GRPCStatus lets status.FromError and status.Code see the code.
func (e *PoolError) GRPCStatus() *status.Status { return status.New(e.Code, e.Error()) }

// acquireError turns a failed acquire into a PoolError with a fitting code.
func acquireError(err error) error {
	code := codes.Unavailable
	switch {
	case errors.Is(err, shoal.ErrDial):
		// First: a dial that timed out wraps DeadlineExceeded too, but the
		// caller's own deadline has not passed.
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	case errors.Is(err, context.Canceled), errors.Is(err, shoal.ErrClosed):
		// grpc.ClientConn says Canceled after Close too.
		code = codes.Canceled
	case errors.Is(err, shoal.ErrExhausted):
		code = codes.ResourceExhausted
	}
	return &PoolError{Code: code, Err: err}
}
