package shoalpgx

import (
	"context"

	"github.com/jackc/pgx/v5"
)

// AcquireTracer traces acquires, as pgxpool's does. The pool uses the
// ConnConfig's Tracer as one when it has these methods. Every acquire is
// traced: Acquire and AcquireFunc, and those of Exec, Query, QueryRow,
// SendBatch, CopyFrom, Begin, BeginTx and Ping; AcquireAllIdle's are not.
//
// A tracer written for pgxpool (otelpgx's, say) has the same methods with
// *pgxpool.Pool in them, so it is not one of these; see the package doc
// ("Tracing") for the adapter that makes it one.
type AcquireTracer interface {
	// TraceAcquireStart is called at the beginning of an acquire. The
	// context it returns is the one the acquire uses from then on (it
	// reaches PrepareConn and ShouldPing) and the one passed to
	// TraceAcquireEnd.
	TraceAcquireStart(ctx context.Context, pool *Pool, data TraceAcquireStartData) context.Context
	// TraceAcquireEnd is called when the acquire returns, with the
	// connection or the error.
	TraceAcquireEnd(ctx context.Context, pool *Pool, data TraceAcquireEndData)
}

// TraceAcquireStartData is what TraceAcquireStart is told: nothing yet, as
// in pgxpool.
type TraceAcquireStartData struct{}

// TraceAcquireEndData is what TraceAcquireEnd is told: the connection
// acquired, or the error of an acquire that failed.
type TraceAcquireEndData struct {
	Conn *pgx.Conn // the connection acquired; nil when Err is set
	Err  error     // why the acquire failed; nil when it did not
}

// ReleaseTracer traces releases, as pgxpool's does. The pool uses the
// ConnConfig's Tracer as one when it has this method. Every release of a
// connection acquired for a caller is traced: Conn.Release and the
// releases that end a pool operation (an Exec, a Query's rows closing, a
// Tx from Begin ending, ...). Hijack is not a release.
type ReleaseTracer interface {
	// TraceRelease is called at the beginning of a release, before the
	// pool decides whether to keep the connection.
	TraceRelease(pool *Pool, data TraceReleaseData)
}

// TraceReleaseData is what TraceRelease is told: the connection being
// released.
type TraceReleaseData struct {
	Conn *pgx.Conn // the connection being released, before the pool takes it back
}
