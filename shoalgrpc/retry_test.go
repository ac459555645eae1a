package shoalgrpc

import (
	"io"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// flakyServer fails the first attempt of every server-streaming call with
// UNAVAILABLE, before sending anything, and answers the next.
type flakyServer struct {
	testpb.UnimplementedTestServiceServer
	attempts atomic.Int64
}

func (s *flakyServer) StreamingOutputCall(_ *testpb.StreamingOutputCallRequest, out grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error {
	if s.attempts.Add(1) == 1 {
		return status.Error(codes.Unavailable, "first attempt fails")
	}
	return out.Send(&testpb.StreamingOutputCallResponse{})
}

// retryServiceConfig retries the test service's calls on UNAVAILABLE.
const retryServiceConfig = `{"methodConfig": [{
	"name": [{"service": "grpc.testing.TestService"}],
	"retryPolicy": {"maxAttempts": 3, "initialBackoff": "0.01s", "maxBackoff": "0.05s",
		"backoffMultiplier": 2, "retryableStatusCodes": ["UNAVAILABLE"]}}]}`

// TestStreamsKeepGRPCRetries: a stream opened through the pool is retried
// by grpc-go's retry policy as one opened on a grpc.ClientConn is; the pool
// must not commit the stream to its first attempt (as reading the stream's
// Context does) to learn when it ends.
func TestStreamsKeepGRPCRetries(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	flaky := &flakyServer{}
	testpb.RegisterTestServiceServer(srv, flaky)
	go srv.Serve(l)
	t.Cleanup(srv.Stop)

	p, err := NewClient(l.Addr().String(), Options{MaxConns: 1}, insecureCreds(), grpc.WithDefaultServiceConfig(retryServiceConfig))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { p.Close() })
	ctx := testContext(t, 10*time.Second)
	st, err := testpb.NewTestServiceClient(p).StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	for {
		_, err := st.Recv()
		if err == io.EOF {
			break
		}
		if err != nil {
			t.Fatalf("server-streaming call through the pool, not retried: %v", err)
		}
	}
	if n := flaky.attempts.Load(); n != 2 {
		t.Errorf("the server saw %d attempts, want 2", n)
	}
	if !waitFor(5*time.Second, func() bool { return p.Stats().Leases == 0 }) {
		t.Errorf("the retried stream's slot is still held: %+v", p.Stats())
	}
}
