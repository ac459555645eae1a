package shoalgrpc

import (
	"context"
	"io"
	"net"
	"runtime"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// retryingServer fails the first attempt of a server-streaming call with
// UNAVAILABLE; a later attempt sends one response and then keeps the stream
// open until the test closes finish.
type retryingServer struct {
	testpb.UnimplementedTestServiceServer
	attempts atomic.Int64
	answered chan struct{} // a later attempt sent its response
	finish   chan struct{}
}

func (s *retryingServer) StreamingOutputCall(_ *testpb.StreamingOutputCallRequest, out grpc.ServerStreamingServer[testpb.StreamingOutputCallResponse]) error {
	if s.attempts.Add(1) == 1 {
		return status.Error(codes.Unavailable, "first attempt fails")
	}
	if err := out.Send(&testpb.StreamingOutputCallResponse{}); err != nil {
		return err
	}
	s.answered <- struct{}{}
	select {
	case <-s.finish:
		return nil
	case <-out.Context().Done():
		return out.Context().Err()
	}
}

// retryOnUnavailable is a stream interceptor that, like go-grpc-middleware's
// retry interceptor on a server stream, retries in RecvMsg: when its stream
// fails with UNAVAILABLE before any response, it opens a new stream with the
// streamer it was given, sends the request again and reads from that one.
func retryOnUnavailable(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	cs, err := streamer(ctx, desc, cc, method, opts...)
	if err != nil {
		return nil, err
	}
	return &retryingStream{ClientStream: cs, ctx: ctx, desc: desc, cc: cc, method: method, streamer: streamer, opts: opts}, nil
}

type retryingStream struct {
	grpc.ClientStream
	ctx      context.Context
	desc     *grpc.StreamDesc
	cc       *grpc.ClientConn
	method   string
	streamer grpc.Streamer
	opts     []grpc.CallOption
	sent     any  // the request, to send again
	received bool // a response arrived: no retry after it
	retried  bool
}

func (r *retryingStream) SendMsg(m any) error {
	r.sent = m
	return r.ClientStream.SendMsg(m)
}

func (r *retryingStream) RecvMsg(m any) error {
	err := r.ClientStream.RecvMsg(m)
	if status.Code(err) != codes.Unavailable || r.received || r.retried {
		r.received = r.received || err == nil
		return err
	}
	r.retried = true
	cs, err := r.streamer(r.ctx, r.desc, r.cc, r.method, r.opts...)
	if err != nil {
		return err
	}
	r.ClientStream = cs
	if err := cs.SendMsg(r.sent); err != nil {
		return err
	}
	if err := cs.CloseSend(); err != nil {
		return err
	}
	err = cs.RecvMsg(m)
	r.received = err == nil
	return err
}

// retriedStream opens a server-streaming call through a pool whose dial
// option d retries it, and reads the retried stream's response.
func retriedStream(t *testing.T, d grpc.DialOption) (*Pool, *retryingServer, grpc.ServerStreamingClient[testpb.StreamingOutputCallResponse], context.CancelFunc) {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	srv := grpc.NewServer()
	rs := &retryingServer{answered: make(chan struct{}, 1), finish: make(chan struct{})}
	testpb.RegisterTestServiceServer(srv, rs)
	served := make(chan struct{})
	go func() {
		defer close(served)
		_ = srv.Serve(l)
	}()
	t.Cleanup(func() {
		srv.Stop()
		<-served
	})
	p := newTestPool(t, l.Addr().String(), Options{MaxConns: 1}, d)
	ctx, cancel := context.WithCancel(testContext(t, 20*time.Second))
	st, err := testpb.NewTestServiceClient(p).StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatalf("the retried stream: %v", err)
	}
	<-rs.answered
	if n := rs.attempts.Load(); n != 2 {
		t.Errorf("the server saw %d attempts, want 2", n)
	}
	if n := p.Stats().Leases; n != 1 {
		t.Errorf("while the retried stream is open: %d stream slots in use, want 1", n)
	}
	return p, rs, st, cancel
}

// TestDialOptionInterceptorRetriesStream: a stream interceptor given as a
// dial option that opens a second stream after its first failed works
// through the pool, and the call holds its one slot while the retried
// stream is open and gives it back when that stream ends: at its io.EOF,
// when its context ends, when the caller drops it, and at Close.
func TestDialOptionInterceptorRetriesStream(t *testing.T) {
	for _, tc := range []struct {
		name string
		dial grpc.DialOption
	}{
		{"WithStreamInterceptor", grpc.WithStreamInterceptor(retryOnUnavailable)},
		{"WithChainStreamInterceptor", grpc.WithChainStreamInterceptor(retryOnUnavailable)},
	} {
		t.Run(tc.name+"/EOF", func(t *testing.T) {
			p, rs, st, _ := retriedStream(t, tc.dial)
			close(rs.finish)
			if _, err := st.Recv(); err != io.EOF {
				t.Fatalf("the retried stream's end: %v, want io.EOF", err)
			}
			if n := p.Stats().Leases; n != 0 {
				t.Errorf("after the retried stream's io.EOF: %d stream slots in use, want 0", n)
			}
		})
		t.Run(tc.name+"/cancel", func(t *testing.T) {
			p, _, st, cancel := retriedStream(t, tc.dial)
			cancel()
			if !waitFor(10*time.Second, func() bool { return p.Stats().Leases == 0 }) {
				t.Errorf("after the retried stream's context ended: %+v, want no stream slot in use", p.Stats())
			}
			if _, err := st.Recv(); status.Code(err) != codes.Canceled {
				t.Errorf("Recv after cancel: %v, want Canceled", err)
			}
		})
		t.Run(tc.name+"/abandoned", func(t *testing.T) {
			var p *Pool
			func() {
				var st grpc.ServerStreamingClient[testpb.StreamingOutputCallResponse]
				p, _, st, _ = retriedStream(t, tc.dial)
				runtime.KeepAlive(st)
			}()
			reclaimed := waitFor(10*time.Second, func() bool {
				runtime.GC()
				return p.Stats().Leases == 0
			})
			if !reclaimed {
				t.Errorf("the abandoned retried stream still holds its slot: %+v", p.Stats())
			}
		})
		t.Run(tc.name+"/Close", func(t *testing.T) {
			p, _, st, _ := retriedStream(t, tc.dial)
			select {
			case err := <-closeAsync(p):
				if err != nil {
					t.Errorf("Close: %v", err)
				}
			case <-time.After(10 * time.Second):
				t.Fatal("Close had not returned after 10s with a retried stream open")
			}
			if n := p.Stats().Leases; n != 0 {
				t.Errorf("after Close: %d stream slots in use, want 0", n)
			}
			if _, err := st.Recv(); status.Code(err) != codes.Canceled {
				t.Errorf("Recv after Close: %v, want Canceled", err)
			}
		})
	}
}
