package shoalgrpc

import (
	"context"
	"io"
	"net"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/peer"
)

// testServer is an in-process gRPC server on loopback, capped at a few
// concurrent streams per connection, that remembers its connections so a
// test can close one from the server side.
//
// UnaryCall sleeps for SimpleRequest.ResponseSize milliseconds.
// StreamingOutputCall sends one response and then holds the stream open
// until the client ends it. FullDuplexCall echoes every request until the
// client closes its side.
type testServer struct {
	testpb.UnimplementedTestServiceServer

	addr string
	srv  *grpc.Server
	lis  *trackingListener

	mu       sync.Mutex
	inFlight map[string]int // calls running, by client address
	maxSeen  map[string]int // most calls seen at once, by client address
}

// startTestServer starts a server allowing maxStreams concurrent streams per
// connection; it stops when the test ends.
func startTestServer(t testing.TB, maxStreams uint32) *testServer {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	return startTestServerOn(t, l, maxStreams)
}

// startTestServerOn is startTestServer on a listener of the caller's.
func startTestServerOn(t testing.TB, l net.Listener, maxStreams uint32) *testServer {
	t.Helper()
	s := &testServer{
		addr:     l.Addr().String(),
		srv:      grpc.NewServer(grpc.MaxConcurrentStreams(maxStreams)),
		lis:      &trackingListener{Listener: l, conns: map[string]net.Conn{}},
		inFlight: map[string]int{},
		maxSeen:  map[string]int{},
	}
	testpb.RegisterTestServiceServer(s.srv, s)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = s.srv.Serve(s.lis)
	}()
	t.Cleanup(func() {
		s.srv.Stop()
		<-done
	})
	return s
}

// enter and leave count the calls running on each connection.
func (s *testServer) enter(ctx context.Context) string {
	client := ""
	if p, ok := peer.FromContext(ctx); ok {
		client = p.Addr.String()
	}
	s.mu.Lock()
	s.inFlight[client]++
	s.maxSeen[client] = max(s.maxSeen[client], s.inFlight[client])
	s.mu.Unlock()
	return client
}

func (s *testServer) leave(client string) {
	s.mu.Lock()
	s.inFlight[client]--
	s.mu.Unlock()
}

// busiest returns the client address with the most calls running now.
func (s *testServer) busiest() (string, int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	best, n := "", 0
	for c, k := range s.inFlight {
		if k > n {
			best, n = c, k
		}
	}
	return best, n
}

// connections reports how many distinct client connections made calls and
// the most calls any one of them had running at once.
func (s *testServer) connections() (conns, maxConcurrent int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	for _, k := range s.maxSeen {
		conns++
		maxConcurrent = max(maxConcurrent, k)
	}
	return conns, maxConcurrent
}

func (s *testServer) UnaryCall(ctx context.Context, req *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	defer s.leave(s.enter(ctx))
	if d := time.Duration(req.GetResponseSize()) * time.Millisecond; d > 0 {
		t := time.NewTimer(d)
		defer t.Stop()
		select {
		case <-t.C:
		case <-ctx.Done():
			return nil, ctx.Err()
		}
	}
	return &testpb.SimpleResponse{}, nil
}

func (s *testServer) StreamingOutputCall(req *testpb.StreamingOutputCallRequest, stream grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error {
	defer s.leave(s.enter(stream.Context()))
	if err := stream.Send(&testpb.StreamingOutputCallResponse{}); err != nil {
		return err
	}
	<-stream.Context().Done()
	return stream.Context().Err()
}

func (s *testServer) FullDuplexCall(stream grpc.BidiStreamingServer[testpb.StreamingOutputCallRequest, testpb.StreamingOutputCallResponse]) error {
	defer s.leave(s.enter(stream.Context()))
	for {
		req, err := stream.Recv()
		if err == io.EOF {
			return nil
		}
		if err != nil {
			return err
		}
		if err := stream.Send(&testpb.StreamingOutputCallResponse{Payload: req.GetPayload()}); err != nil {
			return err
		}
	}
}

// trackingListener remembers the connections it accepted, by the client's
// address, so that a test can close one of them.
type trackingListener struct {
	net.Listener
	mu    sync.Mutex
	conns map[string]net.Conn
}

func (l *trackingListener) Accept() (net.Conn, error) {
	c, err := l.Listener.Accept()
	if err == nil {
		l.mu.Lock()
		l.conns[c.RemoteAddr().String()] = c
		l.mu.Unlock()
	}
	return c, err
}

// closeConn closes the server's side of the connection from client.
func (l *trackingListener) closeConn(client string) bool {
	l.mu.Lock()
	c := l.conns[client]
	l.mu.Unlock()
	return c != nil && c.Close() == nil
}
