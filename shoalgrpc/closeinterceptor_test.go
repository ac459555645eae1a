package shoalgrpc

import (
	"context"
	"runtime"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// gate is a dial-option interceptor's hold on a call: it reports the call's
// arrival on entered and keeps it until the test opens the gate (at the
// test's end at the latest, so that no goroutine outlives it).
type gate struct {
	entered chan struct{}
	open    chan struct{}
	once    sync.Once
}

func newGate(t *testing.T) *gate {
	g := &gate{entered: make(chan struct{}, 1), open: make(chan struct{})}
	t.Cleanup(g.release)
	return g
}

func (g *gate) hold() {
	g.entered <- struct{}{}
	<-g.open
}

func (g *gate) release() { g.once.Do(func() { close(g.open) }) }

// closeAsync calls p.Close on a goroutine of its own.
func closeAsync(p *Pool) <-chan error {
	done := make(chan error, 1)
	go func() { done <- p.Close() }()
	return done
}

// closeReturned fails the test when the Close behind done has not returned
// within limit while g holds a call: what g holds must not hold Close. On
// failure it opens g first, so that Close and the test can end.
func closeReturned(t *testing.T, done <-chan error, g *gate, limit time.Duration) {
	t.Helper()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(limit):
		g.release()
		<-done
		t.Fatalf("Close had not returned after %s while a dial-option interceptor was still running", limit)
	}
}

// TestCloseDoesNotWaitForDialOptionUnaryInterceptor: Close returns while a
// unary interceptor given as a dial option is still running on a call's
// connection, as grpc.ClientConn.Close does; the call fails with
// codes.Canceled once the interceptor goes on.
func TestCloseDoesNotWaitForDialOptionUnaryInterceptor(t *testing.T) {
	srv := startTestServer(t, 100)
	g := newGate(t)
	var blockOnce sync.Once
	ic := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		blockOnce.Do(g.hold)
		return invoke(ctx, method, req, reply, cc, opts...)
	}
	p, err := NewClient(srv.addr, Options{MaxConns: 1}, insecureCreds(), grpc.WithUnaryInterceptor(ic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	callErr := make(chan error, 1)
	go func() {
		_, err := testpb.NewTestServiceClient(p).UnaryCall(context.Background(), &testpb.SimpleRequest{})
		callErr <- err
	}()
	<-g.entered
	closeReturned(t, closeAsync(p), g, 10*time.Second)
	g.release()
	if err := <-callErr; status.Code(err) != codes.Canceled {
		t.Errorf("the call held by the interceptor across Close: %v, want codes.Canceled", err)
	}
}

// TestCloseDoesNotWaitForDialOptionStreamInterceptor: the same for a
// stream interceptor given as a dial option.
func TestCloseDoesNotWaitForDialOptionStreamInterceptor(t *testing.T) {
	srv := startTestServer(t, 100)
	g := newGate(t)
	ic := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		g.hold()
		return streamer(ctx, desc, cc, method, opts...)
	}
	p, err := NewClient(srv.addr, Options{MaxConns: 1}, insecureCreds(), grpc.WithStreamInterceptor(ic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	// A connection first, so that the stream waits in the interceptor and
	// not for a dial.
	if _, err := testpb.NewTestServiceClient(p).UnaryCall(testContext(t, 20*time.Second), &testpb.SimpleRequest{}); err != nil {
		t.Fatal(err)
	}
	streamErr := make(chan error, 1)
	go func() {
		_, err := testpb.NewTestServiceClient(p).FullDuplexCall(context.Background())
		streamErr <- err
	}()
	<-g.entered
	closeReturned(t, closeAsync(p), g, 10*time.Second)
	g.release()
	if err := <-streamErr; status.Code(err) != codes.Canceled {
		t.Errorf("the stream held by the interceptor across Close: %v, want codes.Canceled", err)
	}
}

// TestCloseDoesNotWaitForInterceptorOnFailedCall: a call that Close fails
// while it waits for a slot goes through the failure channel, where the
// dial options' interceptors run; one still running there does not hold
// Close up either.
func TestCloseDoesNotWaitForInterceptorOnFailedCall(t *testing.T) {
	srv := startTestServer(t, 100)
	g := newGate(t)
	ic := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		if method == "/grpc.testing.TestService/UnaryCall" {
			g.hold()
		}
		return invoke(ctx, method, req, reply, cc, opts...)
	}
	p, err := NewClient(srv.addr, Options{MaxConns: 1, MaxStreams: 1}, insecureCreds(), grpc.WithUnaryInterceptor(ic))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	holdOnlySlot(t, p)
	callErr := make(chan error, 1)
	go func() {
		_, err := testpb.NewTestServiceClient(p).UnaryCall(context.Background(), &testpb.SimpleRequest{})
		callErr <- err
	}()
	if !waitFor(10*time.Second, func() bool { return p.Stats().Waiting == 1 }) {
		t.Fatal("the call never waited for the slot")
	}
	closed := closeAsync(p)
	// Close failed the call, which is now in the interceptor on the
	// failure channel.
	<-g.entered
	closeReturned(t, closed, g, 10*time.Second)
	g.release()
	if err := <-callErr; status.Code(err) != codes.Canceled {
		t.Errorf("the call failed by Close: %v, want codes.Canceled", err)
	}
}

// fakeStream is a stream a dial option's interceptor makes up without
// asking grpc-go for one (a cached answer, a stub).
type fakeStream struct{ grpc.ClientStream }

// TestStreamAnsweredByDialOptionInterceptorHoldsNoSlot: a stream interceptor
// given as a dial option that answers NewStream itself, without calling its
// streamer, leaves no stream open on the connection, so the call's slot is
// free again when NewStream returns, and Close does not wait for it.
func TestStreamAnsweredByDialOptionInterceptorHoldsNoSlot(t *testing.T) {
	srv := startTestServer(t, 100)
	ic := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		return fakeStream{}, nil
	}
	p, err := NewClient(srv.addr, Options{MaxConns: 1, MaxStreams: 1}, insecureCreds(), grpc.WithStreamInterceptor(ic))
	if err != nil {
		t.Fatal(err)
	}
	s, err := p.NewStream(testContext(t, 20*time.Second), &grpc.StreamDesc{ServerStreams: true}, "/grpc.testing.TestService/StreamingOutputCall")
	if err != nil {
		t.Fatal(err)
	}
	if n := p.Stats().Leases; n != 0 {
		t.Errorf("after a NewStream the interceptor answered itself: %d stream slots in use, want 0", n)
	}
	select {
	case err := <-closeAsync(p):
		if err != nil {
			t.Errorf("Close: %v", err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("Close had not returned after 10s, waiting for the slot of a stream grpc-go never made")
	}
	runtime.KeepAlive(s)
}
