package shoalgrpc

import (
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// TestWaitForReadyCallAsksAgainAndIsNotWaiting guards what grpc.md says a
// grpc.WaitForReady call costs while the server is down: it asks the pool
// again and again, each refusal counting as a failed acquire in Stats, and
// it is not among the callers waiting.
func TestWaitForReadyCallAsksAgainAndIsNotWaiting(t *testing.T) {
	p := newTestPool(t, refusedAddr(t), Options{MaxConns: 1, DialTimeout: 2 * time.Second})
	client := testpb.NewTestServiceClient(p)
	done := make(chan error, 1)
	go func() {
		_, err := client.UnaryCall(testContext(t, 2*time.Second), &testpb.SimpleRequest{}, grpc.WaitForReady(true))
		done <- err
	}()
	if !waitFor(10*time.Second, func() bool { return p.Stats().FailedAcquires >= 4 }) {
		t.Fatalf("a WaitForReady call on a server that is down: %v, want a failed acquire for each time it asks", p.Stats())
	}
	if s := p.Stats(); s.Waiting != 0 {
		t.Errorf("while the WaitForReady call waits for the server: %v, want none waiting", s)
	}
	if err := <-done; status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("the WaitForReady call: %v, want DeadlineExceeded", err)
	}
}
