package shoalgrpc

import (
	"context"
	"net"
	"sync/atomic"
	"testing"
	"time"

	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// MaxDialing's default is MaxConns, the one the pool has now: a pool grown
// by SetMaxConns opens the connections its waiting calls need all at once,
// as a pool made that large would, not one after another at the MaxConns
// it was made with.
func TestMaxDialingDefaultFollowsSetMaxConns(t *testing.T) {
	srv := startTestServer(t, 10)
	p := newTestPool(t, srv.addr, Options{MaxConns: 1, MaxStreams: 1})
	// The first connection opens; every later one waits at the gate, so
	// that the dials in flight can be counted.
	gate := make(chan struct{})
	var dials atomic.Int32
	p.netDial = func(ctx context.Context, c *conn, network, addr string) (net.Conn, error) {
		if dials.Add(1) > 1 {
			select {
			case <-gate:
			case <-ctx.Done():
				return nil, ctx.Err()
			}
		}
		return netDial(ctx, c, network, addr)
	}
	client := testpb.NewTestServiceClient(p)
	ctx := testContext(t, 30*time.Second)

	// A stream takes the one slot of the one connection.
	streamCtx, endStream := context.WithCancel(ctx)
	defer endStream()
	stream, err := client.StreamingOutputCall(streamCtx, &testpb.StreamingOutputCallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}

	const waiting = 6
	errs := make(chan error, waiting)
	for range waiting {
		go func() {
			_, err := client.UnaryCall(ctx, &testpb.SimpleRequest{})
			errs <- err
		}()
	}
	if !waitFor(10*time.Second, func() bool { return p.Stats().Waiting == waiting }) {
		t.Fatalf("the calls are not waiting: %v", p.Stats())
	}
	if err := p.SetMaxConns(1 + waiting); err != nil {
		t.Fatal(err)
	}
	if !waitFor(10*time.Second, func() bool { return p.Stats().Dialing == waiting }) {
		t.Errorf("after SetMaxConns(%d), %d connections being opened for %d waiting calls, want %d at once",
			1+waiting, p.Stats().Dialing, waiting, waiting)
	}
	close(gate)
	for range waiting {
		if err := <-errs; err != nil {
			t.Errorf("a waiting call: %v", err)
		}
	}
}
