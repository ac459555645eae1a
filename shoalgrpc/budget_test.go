package shoalgrpc

import (
	"context"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// Options.Budget limits the pool's connections to its share, below
// MaxConns (docs/settings.md, "Budget"): with a budget of 2 connections of
// 2 streams each, four streams open two connections, and a fifth call
// waits, and fails at its deadline with an error that names the budget,
// as docs/operating.md reads it.
func TestBudgetLimitsConnections(t *testing.T) {
	budget, err := shoal.NewBudget(2, shoal.BudgetName("calls"))
	if err != nil {
		t.Fatal(err)
	}
	srv := startTestServer(t, 10)
	p := newTestPool(t, srv.addr, Options{MaxConns: 4, MaxStreams: 2, Budget: budget})
	client := testpb.NewTestServiceClient(p)
	ctx, endStreams := context.WithCancel(testContext(t, 30*time.Second))
	defer endStreams()

	var open []grpc.ServerStreamingClient[testpb.StreamingOutputCallResponse]
	for range 4 {
		stream, err := client.StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Recv(); err != nil {
			t.Fatal(err)
		}
		open = append(open, stream)
	}
	if s := p.Stats(); s.TotalConns != 2 || s.Share != 2 || s.Leases != 4 {
		t.Fatalf("four streams under a budget of 2: %d connections, share %d, %d leases; want 2, 2, 4", s.TotalConns, s.Share, s.Leases)
	}

	short, cancel := context.WithTimeout(ctx, 500*time.Millisecond)
	defer cancel()
	_, err = client.UnaryCall(short, &testpb.SimpleRequest{})
	if status.Code(err) != codes.DeadlineExceeded || !strings.Contains(err.Error(), `; budget "calls" lets the pool hold 2 now`) {
		t.Errorf("a fifth call with the budget's connections full: %v; want DeadlineExceeded naming the budget", err)
	}
	if s := p.Stats(); s.TotalConns != 2 {
		t.Errorf("%d connections after the fifth call, want the budget's 2", s.TotalConns)
	}
	endStreams()
	runtime.KeepAlive(open)
}
