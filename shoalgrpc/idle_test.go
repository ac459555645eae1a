package shoalgrpc

import (
	"sync"
	"testing"
	"time"

	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// The extra connections a burst opened close once idle for MaxIdleTime;
// MinConns stay.
func TestIdleExtraConnectionsClose(t *testing.T) {
	opts := Options{MaxConns: 4, MinConns: 1, MaxIdleTime: 150 * time.Millisecond}
	srv := startTestServer(t, 10)
	p := newTestPool(t, srv.addr, opts)
	client := testpb.NewTestServiceClient(p)
	ctx := testContext(t, 30*time.Second)

	// 35 calls of 300 ms at 10 streams per connection need 4 connections.
	var wg sync.WaitGroup
	for range 35 {
		wg.Go(func() {
			if _, err := client.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: 300}); err != nil {
				t.Errorf("UnaryCall: %v", err)
			}
		})
	}
	if !waitFor(10*time.Second, func() bool { return p.Stats().TotalConns == 4 }) {
		t.Fatalf("the burst did not open 4 connections: %+v", p.Stats())
	}
	wg.Wait()
	if !waitFor(10*time.Second, func() bool { return p.Stats().TotalConns == 1 }) {
		t.Fatalf("idle connections not closed down to the floor of 1: %+v", p.Stats())
	}
	// Several idle periods later the pool still keeps its floor.
	time.Sleep(500 * time.Millisecond)
	if s := p.Stats(); s.TotalConns != 1 || s.Closed != 3 {
		t.Fatalf("after idling: %+v; want 1 connection kept and the 3 extra closed", s)
	}
	if _, err := client.UnaryCall(ctx, &testpb.SimpleRequest{}); err != nil {
		t.Fatalf("UnaryCall on the kept connection: %v", err)
	}
}

// Zero means the default, negative means never.
func TestMaxIdleTimeDefault(t *testing.T) {
	if got := (Options{}).withDefaults().MaxIdleTime; got != defaultMaxIdleTime {
		t.Errorf("zero MaxIdleTime became %v, want %v", got, defaultMaxIdleTime)
	}
	if got := (Options{MaxIdleTime: -1}).withDefaults().MaxIdleTime; got != 0 {
		t.Errorf("negative MaxIdleTime became %v, want 0 (never) for the core", got)
	}
}
