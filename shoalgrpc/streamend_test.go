package shoalgrpc

import (
	"context"
	"io"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// inputServer answers a client-streaming call with the total size of the
// payloads it received.
type inputServer struct {
	testpb.UnimplementedTestServiceServer
}

func (inputServer) StreamingInputCall(in grpc.ClientStreamingServer[testpb.StreamingInputCallRequest, testpb.StreamingInputCallResponse]) error {
	n := 0
	for {
		req, err := in.Recv()
		if err == io.EOF {
			return in.SendAndClose(&testpb.StreamingInputCallResponse{AggregatedPayloadSize: int32(n)})
		}
		if err != nil {
			return err
		}
		n += len(req.GetPayload().GetBody())
	}
}

// startInputServer starts an inputServer, stopped when the test ends, and
// returns its address.
func startInputServer(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	testpb.RegisterTestServiceServer(srv, inputServer{})
	served := make(chan struct{})
	go func() { defer close(served); _ = srv.Serve(l) }()
	t.Cleanup(func() { srv.Stop(); <-served })
	return l.Addr().String()
}

// wrappedStream is what a dial option's stream interceptor hands back in
// place of grpc-go's stream, as logging and metrics interceptors do.
type wrappedStream struct{ grpc.ClientStream }

func wrapStream(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	cs, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return nil, err
	}
	return wrappedStream{cs}, nil
}

// plainAndWrapped are the dial options of a pool whose streams the caller
// gets from grpc-go, and of one whose streams a dial option's interceptor
// wraps.
var plainAndWrapped = []struct {
	name string
	opts []grpc.DialOption
}{{"plain", nil}, {"wrapped", []grpc.DialOption{grpc.WithStreamInterceptor(wrapStream)}}}

// TestClientStreamReleasesOnItsResponse: a stream whose server does not
// stream (client-streaming) gives its slot back when RecvMsg returns its
// one response, before RecvMsg returns, while its context goes on. That
// holds too when a dial option's interceptor wraps the stream, where
// grpc-go finishing its own stream cannot tell the pool that no retry will
// follow: only the response read through the caller's stream does.
func TestClientStreamReleasesOnItsResponse(t *testing.T) {
	for _, tc := range plainAndWrapped {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPool(t, startInputServer(t), Options{MaxConns: 1}, tc.opts...)
			ctx := testContext(t, 30*time.Second)
			stream, err := testpb.NewTestServiceClient(p).StreamingInputCall(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := stream.Send(&testpb.StreamingInputCallRequest{Payload: &testpb.Payload{Body: []byte("abc")}}); err != nil {
				t.Fatal(err)
			}
			resp, err := stream.CloseAndRecv()
			if err != nil || resp.GetAggregatedPayloadSize() != 3 {
				t.Fatalf("CloseAndRecv: %v %v", resp, err)
			}
			if got := p.Stats().Leases; got != 0 {
				t.Fatalf("client stream answered: %d leases held, want 0", got)
			}
		})
	}
}

// TestStreamReleasesWhenSendMsgFails: a SendMsg that fails on the client's
// side (here a message over MaxCallSendMsgSize) ends the stream, and its
// slot is free when SendMsg returns, the stream wrapped by a dial
// option's interceptor or not.
func TestStreamReleasesWhenSendMsgFails(t *testing.T) {
	for _, tc := range plainAndWrapped {
		t.Run(tc.name, func(t *testing.T) {
			p := newTestPool(t, startInputServer(t), Options{MaxConns: 1}, tc.opts...)
			ctx := testContext(t, 30*time.Second)
			stream, err := testpb.NewTestServiceClient(p).StreamingInputCall(ctx, grpc.MaxCallSendMsgSize(4))
			if err != nil {
				t.Fatal(err)
			}
			err = stream.Send(&testpb.StreamingInputCallRequest{Payload: &testpb.Payload{Body: []byte("over four bytes")}})
			if status.Code(err) != codes.ResourceExhausted {
				t.Fatalf("Send over MaxCallSendMsgSize: %v, want ResourceExhausted", err)
			}
			if got := p.Stats().Leases; got != 0 {
				t.Fatalf("SendMsg failed: %d leases held, want 0", got)
			}
		})
	}
}
