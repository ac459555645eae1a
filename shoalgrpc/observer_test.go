package shoalgrpc

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/leaktest"
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

// A stream held open past LeakThreshold is reported once, through the
// observer and Stats, with the stack that opened it; a call that ends in
// time is not.
func TestLeakThresholdReportsAnOpenStream(t *testing.T) {
	srv := startTestServer(t, 10)
	obs := &leaktest.Recorder{}
	const threshold = 50 * time.Millisecond
	p := newTestPool(t, srv.addr, Options{MaxConns: 1, Observer: obs, LeakThreshold: threshold})
	client := testpb.NewTestServiceClient(p)
	if _, err := client.UnaryCall(testContext(t, 30*time.Second), &testpb.SimpleRequest{ResponseSize: 1}); err != nil {
		t.Fatal(err)
	}

	ctx, cancel := context.WithCancel(testContext(t, 30*time.Second))
	defer cancel()
	stream, err := client.StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	if !waitFor(10*time.Second, func() bool { return p.Stats().Leaked == 1 }) {
		t.Fatalf("a stream open past LeakThreshold was not reported: %+v", p.Stats())
	}
	time.Sleep(4 * threshold) // several more scans: still one report
	cancel()
	if n := p.Stats().Leaked; n != 1 {
		t.Errorf("Stats().Leaked = %d for one stream left open, want 1", n)
	}
	reports := obs.Reports()
	if len(reports) != 1 {
		t.Fatalf("observer got %d leak reports, want 1", len(reports))
	}
	r := reports[0]
	if !strings.Contains(r.Function, "StreamingOutputCall") || !strings.Contains(r.Stack, "TestLeakThresholdReportsAnOpenStream") {
		t.Errorf("report names %q; want the call that opened the stream, with this test in its stack:\n%s", r.Function, r.Stack)
	}
}
