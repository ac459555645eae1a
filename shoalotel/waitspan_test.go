package shoalotel_test

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/shoalotel"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
)

// newTraced returns a TracerProvider that records every span, and shoalotel
// metrics whose wait spans go to it at threshold.
func newTraced(t *testing.T, threshold time.Duration) (*shoalotel.Metrics, *tracetest.SpanRecorder, trace.Tracer) {
	t.Helper()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	t.Cleanup(func() { tp.Shutdown(context.Background()) })
	m, _ := newMetrics(t, shoalotel.WithWaitSpans(tp, threshold))
	return m, rec, tp.Tracer("test")
}

// waitSpans returns the ended spans named WaitSpanName.
func waitSpans(rec *tracetest.SpanRecorder) []sdktrace.ReadOnlySpan {
	var out []sdktrace.ReadOnlySpan
	for _, s := range rec.Ended() {
		if s.Name() == shoalotel.WaitSpanName {
			out = append(out, s)
		}
	}
	return out
}

func attr(s sdktrace.ReadOnlySpan, key attribute.Key) string {
	for _, kv := range s.Attributes() {
		if kv.Key == key {
			return kv.Value.String()
		}
	}
	return ""
}

// TestWaitSpanUnderTheCallersSpan: an acquire that waits past the threshold
// inside a trace gets a span, a child of the caller's, as long as the wait,
// with the pool's name; a timed-out one is marked as an error; a short wait,
// a wait outside any trace, and an acquire served at once get none.
func TestWaitSpanUnderTheCallersSpan(t *testing.T) {
	m, rec, tracer := newTraced(t, 5*time.Millisecond)
	obs, err := m.Pool("orders")
	if err != nil {
		t.Fatal(err)
	}
	p, err := shoal.New(shoal.Config[*conn]{Dial: dial, MaxConns: 1, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	if err := p.Warm(context.Background()); err != nil {
		t.Fatal(err)
	}

	ctx, parent := tracer.Start(context.Background(), "request")
	held, err := p.Acquire(ctx) // served at once: no span
	if err != nil {
		t.Fatal(err)
	}
	// With spans on, the pool names the code that took each lease.
	if !obs.Tracing() {
		t.Fatal("Tracing says false with wait spans on")
	}
	if h := p.Holders(); len(h) != 1 || !strings.HasSuffix(h[0].AcquiredBy, ".TestWaitSpanUnderTheCallersSpan") {
		t.Fatalf("Holders = %+v with wait spans on, want the test named as the taker", h)
	}
	const hold = 30 * time.Millisecond
	go func() {
		time.Sleep(hold)
		held.Release()
	}()
	l, err := p.Acquire(ctx) // waits about hold
	if err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	if _, err := p.Acquire(short); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("acquire with a 20ms deadline on a busy pool: %v", err)
	}
	cancel()
	// Outside any trace: no span, however long the wait.
	untraced, cancel := context.WithTimeout(context.Background(), 20*time.Millisecond)
	p.Acquire(untraced)
	cancel()
	l.Release()
	// Below the threshold: the lease comes back at once.
	held2, _ := p.Acquire(ctx)
	go held2.Release()
	if l, err := p.Acquire(ctx); err == nil {
		l.Release()
	}
	parent.End()

	spans := waitSpans(rec)
	if len(spans) < 2 {
		t.Fatalf("%d wait spans, want 2 (the %v wait and the timeout): %v", len(spans), hold, spans)
	}
	for _, s := range spans {
		if s.Parent().SpanID() != parent.SpanContext().SpanID() || s.SpanContext().TraceID() != parent.SpanContext().TraceID() {
			t.Errorf("wait span's parent is %v, want the caller's span %v", s.Parent().SpanID(), parent.SpanContext().SpanID())
		}
		if attr(s, shoalotel.AttrPoolName) != "orders" || s.SpanKind() != trace.SpanKindInternal {
			t.Errorf("wait span has pool name %q and kind %v; want orders and internal", attr(s, shoalotel.AttrPoolName), s.SpanKind())
		}
	}
	waited, timedOut := spans[0], spans[1]
	if d := waited.EndTime().Sub(waited.StartTime()); d < hold-5*time.Millisecond || waited.Status().Code != codes.Unset {
		t.Errorf("the waited acquire's span lasts %v with status %v; want about %v and no error", d, waited.Status(), hold)
	}
	if timedOut.Status().Code != codes.Error || attr(timedOut, shoalotel.AttrErrorType) != "timeout" {
		t.Errorf("the timed-out acquire's span has status %v and error.type %q; want an error and timeout", timedOut.Status(), attr(timedOut, shoalotel.AttrErrorType))
	}
	// The below-threshold acquire can wait past 5ms on a loaded machine;
	// anything beyond the two above must then be at least that long.
	for _, s := range spans[2:] {
		if d := s.EndTime().Sub(s.StartTime()); d < 5*time.Millisecond {
			t.Errorf("a span for a %v wait, below the 5ms threshold", d)
		}
	}
}

// TestWaitSpansOff: no span without WithWaitSpans, even with a global
// TracerProvider, nor with a negative threshold.
func TestWaitSpansOff(t *testing.T) {
	for _, optIn := range []bool{false, true} {
		testWaitSpansOff(t, optIn)
	}
}

func testWaitSpansOff(t *testing.T, optIn bool) {
	var (
		m      *shoalotel.Metrics
		rec    *tracetest.SpanRecorder
		tracer trace.Tracer
	)
	if optIn {
		m, rec, tracer = newTraced(t, -1)
	} else {
		rec = tracetest.NewSpanRecorder()
		tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
		prev := otel.GetTracerProvider()
		otel.SetTracerProvider(tp)
		t.Cleanup(func() {
			otel.SetTracerProvider(prev)
			tp.Shutdown(context.Background())
		})
		m, _ = newMetrics(t)
		tracer = tp.Tracer("test")
	}
	obs, _ := m.Pool("off")
	if obs.Tracing() {
		t.Fatal("Tracing says true with wait spans off")
	}
	p, err := shoal.New(shoal.Config[*conn]{Dial: dial, MaxConns: 1, Observer: obs})
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close(context.Background())
	ctx, parent := tracer.Start(context.Background(), "request")
	held, _ := p.Acquire(ctx)
	// Without spans the pool pays for no stack walk: no taker is kept.
	if h := p.Holders(); len(h) != 1 || h[0].AcquiredBy != "" {
		t.Fatalf("Holders = %+v with wait spans off, want one with no taker", h)
	}
	short, cancel := context.WithTimeout(ctx, 10*time.Millisecond)
	p.Acquire(short)
	cancel()
	held.Release()
	parent.End()
	if spans := waitSpans(rec); len(spans) != 0 {
		t.Fatalf("%d wait spans with wait spans off", len(spans))
	}
}
