package integration_test

import (
	"context"
	"testing"
	"time"

	"github.com/shoalpool/shoal/shoalgrpc"
	"go.opentelemetry.io/contrib/instrumentation/google.golang.org/grpc/otelgrpc"
	"go.opentelemetry.io/otel/attribute"
	otelcodes "go.opentelemetry.io/otel/codes"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// TestOtelgrpcRecordsPoolFailures: with otelgrpc's client stats handler as
// a dial option, a call to a down server and a call whose deadline passed
// while it waited for a stream are each recorded as a span under the
// caller's, with an error status and the gRPC code, as otelgrpc records
// them on a grpc.ClientConn.
func TestOtelgrpcRecordsPoolFailures(t *testing.T) {
	spans := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(spans))
	t.Cleanup(func() { _ = tp.Shutdown(context.Background()) })
	handler := grpc.WithStatsHandler(otelgrpc.NewClientHandler(otelgrpc.WithTracerProvider(tp)))

	// check finds the one span of method and checks it against code and
	// the caller's span.
	check := func(t *testing.T, method string, code codes.Code, parent context.Context) {
		t.Helper()
		var found []sdktrace.ReadOnlySpan
		for _, s := range spans.Ended() {
			if "/"+s.Name() == method {
				found = append(found, s)
			}
		}
		if len(found) != 1 {
			t.Fatalf("%d spans for %s, want 1", len(found), method)
		}
		s := found[0]
		if s.Status().Code != otelcodes.Error {
			t.Errorf("%s: span status %v, want Error", method, s.Status())
		}
		want := attribute.String("rpc.response.status_code", map[codes.Code]string{
			codes.Unavailable: "UNAVAILABLE", codes.DeadlineExceeded: "DEADLINE_EXCEEDED"}[code])
		has := false
		for _, a := range s.Attributes() {
			has = has || a == want
		}
		if !has {
			t.Errorf("%s: span attributes %v lack %v", method, s.Attributes(), want)
		}
		caller := trace.SpanContextFromContext(parent)
		if s.Parent().SpanID() != caller.SpanID() || s.SpanContext().TraceID() != caller.TraceID() {
			t.Errorf("%s: the span is not the caller's child", method)
		}
	}

	t.Run("server down", func(t *testing.T) {
		p, err := shoalgrpc.NewClient("127.0.0.1:1", shoalgrpc.Options{}, insecureCreds(), handler)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		ctx, caller := tp.Tracer("test").Start(testContext(t, 20*time.Second), "caller")
		_, err = testpb.NewTestServiceClient(p).EmptyCall(ctx, &testpb.Empty{})
		caller.End()
		if status.Code(err) != codes.Unavailable {
			t.Fatalf("call to a down server: %v", err)
		}
		check(t, "/grpc.testing.TestService/EmptyCall", codes.Unavailable, ctx)
	})

	t.Run("deadline passed waiting for a stream", func(t *testing.T) {
		addr := startGRPCServer(t)
		p, err := shoalgrpc.NewClient(addr, shoalgrpc.Options{MaxConns: 1, MaxStreams: 1}, insecureCreds(), handler)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close() })
		holdOnlySlot(t, p)
		ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
		defer cancel()
		ctx, caller := tp.Tracer("test").Start(ctx, "caller")
		_, err = testpb.NewTestServiceClient(p).UnaryCall(ctx, &testpb.SimpleRequest{})
		caller.End()
		if status.Code(err) != codes.DeadlineExceeded {
			t.Fatalf("call waiting past its deadline: %v", err)
		}
		check(t, "/grpc.testing.TestService/UnaryCall", codes.DeadlineExceeded, ctx)
	})
}
