package shoalotel

import (
	"context"
	"errors"
	"time"

	"github.com/shoalpool/shoal"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

// WaitSpanName is the name of the span recorded for an acquire that waited
// for a connection (see WithWaitSpans).
const WaitSpanName = "shoal.pool.wait"

// DefaultWaitSpanThreshold is a threshold for WithWaitSpans that suits
// most programs: well above an acquire served at once or handed over by a
// release on a busy pool, and short enough to show a request that queued
// behind a pool that is too small.
const DefaultWaitSpanThreshold = time.Millisecond

// AttrErrorType is on a wait span whose acquire failed: "timeout" (the
// caller's deadline passed), "canceled", "closed" (the pool closed),
// "exhausted" (load shedding dropped it from the queue; an acquire that
// MaxWaiters refuses never waits, so it has no span), "dial" (a dial failed
// and the pool gave up on the caller), or "_OTHER", as OpenTelemetry's
// error.type.
const AttrErrorType = attribute.Key("error.type")

// WithWaitSpans turns wait spans on: a span for every acquire that waited
// at least threshold inside a trace, to provider (nil: the global
// TracerProvider, otel.GetTracerProvider). 0 records every acquire that
// joined the wait queue; a negative threshold leaves spans off, which is
// also the default without this option, so that a program that traces
// gets no new spans until it asks for them.
func WithWaitSpans(provider trace.TracerProvider, threshold time.Duration) Option {
	return optionFunc(func(c *config) {
		c.tracerProvider, c.spanThreshold, c.spanThresholdSet = provider, threshold, true
	})
}

// Tracing reports whether wait spans are on (WithWaitSpans). The pool asks
// it once, when it is made: only with spans on does it trace waits and
// keep, for each lease, the frame of the code that took it (see
// shoal.WaitTracer), which costs each checkout a walk of the stack.
func (p *PoolMetrics) Tracing() bool { return p.metrics.tracer != nil }

// TraceWait records a span, as a child of the caller's span, for an acquire
// that waited at least the threshold (WithWaitSpans): from when it began
// to wait to when it got a connection or gave up, with the pool's name and,
// for a failed acquire, error.type and an error status. An acquire whose
// context carries no span gets none: a wait is worth a span only inside a
// trace. The pool calls it (it implements shoal.WaitTracer).
func (p *PoolMetrics) TraceWait(ctx context.Context, start time.Time, wait time.Duration, err error) {
	if p.late != nil {
		// Metrics made without a name have no pool of their own: the
		// span carries the name of the pool that attached them.
		if b := p.late.Load(); b != nil {
			b.TraceWait(ctx, start, wait, err)
		}
		return
	}
	m := p.metrics
	if m.tracer == nil || wait < m.spanThreshold || !trace.SpanContextFromContext(ctx).IsValid() {
		return
	}
	_, span := m.tracer.Start(ctx, WaitSpanName,
		trace.WithTimestamp(start),
		trace.WithSpanKind(trace.SpanKindInternal),
		trace.WithAttributes(AttrPoolName.String(p.pool.Name())))
	if err != nil {
		span.SetAttributes(AttrErrorType.String(waitErrorType(err)))
		span.SetStatus(codes.Error, err.Error())
	}
	span.End(trace.WithTimestamp(start.Add(wait)))
}

var _ shoal.WaitTracer = (*PoolMetrics)(nil)

// waitErrorType classifies why an acquire failed, in a few values.
func waitErrorType(err error) string {
	switch {
	case errors.Is(err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(err, context.Canceled):
		return "canceled"
	case errors.Is(err, shoal.ErrClosed):
		return "closed"
	case errors.Is(err, shoal.ErrExhausted):
		return "exhausted"
	case errors.Is(err, shoal.ErrDial):
		return "dial"
	}
	return "_OTHER"
}
