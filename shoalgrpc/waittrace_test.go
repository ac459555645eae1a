package shoalgrpc

import (
	"context"
	"sync"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/waitrec"
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

type callerKey struct{}

// A call that waits for a stream slot is traced with the call's own
// context, so shoalotel's wait span lands under the caller's span.
func TestWaitTracedWithTheCallersContext(t *testing.T) {
	srv := startTestServer(t, 10)
	rec := &waitrec.Recorder{}
	p := newTestPool(t, srv.addr, Options{MaxConns: 1, MaxStreams: 1, Observer: rec})
	client := testpb.NewTestServiceClient(p)
	ctx := testContext(t, 30*time.Second)
	if _, err := client.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: 1}); err != nil {
		t.Fatal(err) // the connection is open from here
	}
	var wg sync.WaitGroup
	wg.Go(func() {
		if _, err := client.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: 200}); err != nil {
			t.Error(err)
		}
	})
	if !waitFor(10*time.Second, func() bool { return p.Stats().Leases == 1 }) {
		t.Fatalf("the slow call never took the one slot: %+v", p.Stats())
	}
	caller := context.WithValue(ctx, callerKey{}, "second")
	if _, err := client.UnaryCall(caller, &testpb.SimpleRequest{ResponseSize: 1}); err != nil {
		t.Fatal(err)
	}
	wg.Wait()
	if calls := rec.Carrying(callerKey{}, "second"); len(calls) != 1 || calls[0].Err != nil {
		t.Fatalf("waits traced with the second call's context: %+v; want one that succeeded", calls)
	}
}
