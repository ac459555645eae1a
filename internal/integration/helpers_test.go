package integration_test

import (
	"context"
	"net"
	"runtime"
	"testing"
	"time"

	"github.com/shoalpool/shoal/shoalgrpc"
	"go.uber.org/goleak"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// TestMain fails the run when any goroutine outlives the tests.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

// testContext returns a context that ends when the test does or after limit.
func testContext(t testing.TB, limit time.Duration) context.Context {
	ctx, cancel := context.WithTimeout(context.Background(), limit)
	t.Cleanup(cancel)
	return ctx
}

// waitFor polls cond until it holds or limit passes, and reports whether it
// held: a bound on waiting for something that happens in the background,
// not a timing assertion.
func waitFor(limit time.Duration, cond func() bool) bool {
	deadline := time.Now().Add(limit)
	for !cond() {
		if time.Now().After(deadline) {
			return false
		}
		time.Sleep(5 * time.Millisecond)
	}
	return true
}

func insecureCreds() grpc.DialOption {
	return grpc.WithTransportCredentials(insecure.NewCredentials())
}

// newGRPCPool returns a plaintext shoalgrpc pool to addr, closed when the
// test ends.
func newGRPCPool(t testing.TB, addr string, opts shoalgrpc.Options) *shoalgrpc.Pool {
	t.Helper()
	p, err := shoalgrpc.NewClient(addr, opts, insecureCreds())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := p.Close(); err != nil {
			t.Errorf("Close: %v", err)
		}
	})
	return p
}

// grpcServer is gRPC's interop test service on loopback: UnaryCall answers
// at once, StreamingOutputCall sends one response and holds the stream
// until the client ends it.
type grpcServer struct {
	testpb.UnimplementedTestServiceServer
}

func (grpcServer) UnaryCall(context.Context, *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	return &testpb.SimpleResponse{}, nil
}

func (grpcServer) StreamingOutputCall(_ *testpb.StreamingOutputCallRequest, stream grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error {
	if err := stream.Send(&testpb.StreamingOutputCallResponse{}); err != nil {
		return err
	}
	<-stream.Context().Done()
	return nil
}

// startGRPCServer starts the interop server and returns its address; it
// stops when the test ends.
func startGRPCServer(t testing.TB) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	testpb.RegisterTestServiceServer(srv, grpcServer{})
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-done
	})
	return l.Addr().String()
}

// holdOnlySlot opens a stream that holds the only stream slot of p (MaxConns
// 1, MaxStreams 1) until the test ends.
func holdOnlySlot(t *testing.T, p *shoalgrpc.Pool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := testpb.NewTestServiceClient(p).StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	// A stream dropped unreachable is canceled when the garbage collector
	// finds it, which would free the slot mid-test.
	t.Cleanup(func() { runtime.KeepAlive(s) })
}
