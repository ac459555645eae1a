package shoalgrpc

import (
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// callObserver counts the stream slots the core hands out and takes back.
type callObserver struct {
	shoal.BaseObserver
	acquires, releases atomic.Int64
}

func (o *callObserver) ObserveAcquire(time.Duration) { o.acquires.Add(1) }
func (o *callObserver) ObserveRelease(time.Duration) { o.releases.Add(1) }

func TestObserverSeesEveryCall(t *testing.T) {
	srv := startTestServer(t, 10)
	obs := &callObserver{}
	p := newTestPool(t, srv.addr, Options{Observer: obs})
	client := testpb.NewTestServiceClient(p)
	ctx := testContext(t, 30*time.Second)
	for range 5 {
		if _, err := client.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: 1}); err != nil {
			t.Fatal(err)
		}
	}
	if a, r := obs.acquires.Load(), obs.releases.Load(); a != 5 || r != 5 {
		t.Fatalf("observer saw %d acquires and %d releases for 5 calls", a, r)
	}
}
