package shoalgrpc

import (
	"context"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// TestSetMaxConnsResizesWhileRunning guards SetMaxConns as grpc.md and
// settings.md promise it: growing serves a call waiting for a stream with a
// new connection at once; shrinking retires the connection left over,
// which closes, and fails no call, the stream in flight included; a bad
// size is an error that says it is shoalgrpc's.
func TestSetMaxConnsResizesWhileRunning(t *testing.T) {
	srv := startTestServer(t, 10)
	p := newTestPool(t, srv.addr, Options{MaxConns: 1, MaxStreams: 1})
	client := testpb.NewTestServiceClient(p)

	// A stream takes the one slot of the one connection.
	streamCtx, endStream := context.WithCancel(testContext(t, 30*time.Second))
	defer endStream()
	stream, err := client.StreamingOutputCall(streamCtx, &testpb.StreamingOutputCallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}

	// A call waits for a slot.
	done := make(chan error, 1)
	go func() {
		_, err := client.UnaryCall(testContext(t, 20*time.Second), &testpb.SimpleRequest{})
		done <- err
	}()
	if !waitFor(10*time.Second, func() bool { return p.Stats().Waiting == 1 }) {
		t.Fatalf("the second call is not waiting: %v", p.Stats())
	}

	// Growing serves it on a second connection.
	if err := p.SetMaxConns(2); err != nil {
		t.Fatalf("SetMaxConns(2): %v", err)
	}
	if err := <-done; err != nil {
		t.Fatalf("the waiting call after SetMaxConns(2): %v", err)
	}
	if s := p.Stats(); s.MaxConns != 2 || s.TotalConns != 2 {
		t.Fatalf("after growing: %v, want 2 connections of at most 2", s)
	}

	// Shrinking closes the idle connection and leaves the stream alone.
	if err := p.SetMaxConns(1); err != nil {
		t.Fatalf("SetMaxConns(1): %v", err)
	}
	if !waitFor(10*time.Second, func() bool { return p.Stats().TotalConns == 1 }) {
		t.Fatalf("after shrinking to 1: %v, want the idle connection closed", p.Stats())
	}
	if s := p.Stats(); s.MaxConns != 1 || s.Leases != 1 {
		t.Fatalf("after shrinking: %v, want MaxConns 1 and the stream's lease", s)
	}
	endStream()
	if _, err := stream.Recv(); status.Code(err) != codes.Canceled {
		t.Fatalf("the stream's Recv after its context ended: %v, want Canceled (the shrink must not fail it)", err)
	}
	if _, err := client.UnaryCall(testContext(t, 20*time.Second), &testpb.SimpleRequest{}); err != nil {
		t.Fatalf("a call after shrinking: %v", err)
	}

	for _, n := range []int{0, -1} {
		if err := p.SetMaxConns(n); err == nil || !strings.HasPrefix(err.Error(), "shoalgrpc: ") {
			t.Errorf("SetMaxConns(%d): %v, want an error from shoalgrpc", n, err)
		}
	}
	if got := p.Stats().MaxConns; got != 1 {
		t.Errorf("MaxConns %d after refused sizes, want 1", got)
	}
}
