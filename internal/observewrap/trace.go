package observewrap

import (
	"context"
	"time"

	"github.com/shoalpool/shoal"
)

// tracerOf returns o as a WaitTracer when it traces waits: it is one and,
// if it has a Tracing method, that method says so. The pool asks the same
// of the Observer it is given, so a wrapper is a WaitTracer only when the
// pool would have traced for o itself.
func tracerOf(o shoal.Observer) (shoal.WaitTracer, bool) {
	t, ok := o.(shoal.WaitTracer)
	if !ok {
		return nil, false
	}
	if s, ok := o.(interface{ Tracing() bool }); ok && !s.Tracing() {
		return nil, false
	}
	return t, true
}

// traceTo makes the Observer that embeds it a WaitTracer passing the waits
// to t.
type traceTo struct{ t shoal.WaitTracer }

// TraceWait passes the wait on.
func (tt traceTo) TraceWait(ctx context.Context, start time.Time, wait time.Duration, err error) {
	tt.t.TraceWait(ctx, start, wait, err)
}
