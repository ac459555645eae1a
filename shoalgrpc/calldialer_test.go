package shoalgrpc

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc"
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// TestCallersContextDialerIsUsed: a grpc.WithContextDialer among the
// caller's dial options opens every connection (a SOCKS or unix-socket
// dialer must not be bypassed by the pool's own), and the pool, which
// then cannot watch the server's first frame, reads no stream limit: the
// connection keeps MaxStreams.
func TestCallersContextDialerIsUsed(t *testing.T) {
	srv := startTestServer(t, 10)
	var dials atomic.Int32
	dialer := grpc.WithContextDialer(func(ctx context.Context, addr string) (net.Conn, error) {
		dials.Add(1)
		var d net.Dialer
		return d.DialContext(ctx, "tcp", addr)
	})
	p := newTestPool(t, srv.addr, Options{}, dialer)
	ctx := testContext(t, 30*time.Second)
	if _, err := testpb.NewTestServiceClient(p).UnaryCall(ctx, &testpb.SimpleRequest{}); err != nil {
		t.Fatalf("UnaryCall: %v", err)
	}
	if n := dials.Load(); n == 0 {
		t.Fatal("the caller's context dialer was never called; the pool dialled past it")
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		if n := c.serverLimit.Load(); n != 0 {
			t.Errorf("connection read the server's stream limit %d through a dialer it did not install", n)
		}
	}
}
