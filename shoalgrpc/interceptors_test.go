package shoalgrpc

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// callLog records what the pool's interceptors saw, in order.
type callLog struct {
	mu    sync.Mutex
	lines []string
}

func (l *callLog) add(s string) {
	l.mu.Lock()
	l.lines = append(l.lines, s)
	l.mu.Unlock()
}

func (l *callLog) all() []string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return append([]string(nil), l.lines...)
}

// TestInterceptorsSeeEveryCallOnce: the pool's interceptors run once per
// call, the first outermost, around the wait for a slot, so a call the
// pool fails (its deadline ends while it waits) reaches them with its
// error, as a call grpc-go answers does.
func TestInterceptorsSeeEveryCallOnce(t *testing.T) {
	srv := startTestServer(t, 100)
	var log callLog
	unary := func(name string) grpc.UnaryClientInterceptor {
		return func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
			log.add(name + " in")
			err := invoke(ctx, method, req, reply, cc, opts...)
			log.add(name + " out: " + status.Code(err).String())
			return err
		}
	}
	stream := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
		cs, err := streamer(ctx, desc, cc, method, opts...)
		log.add("stream: " + status.Code(err).String())
		return cs, err
	}
	p := newTestPool(t, srv.addr, Options{
		MaxConns: 1, MaxStreams: 1,
		UnaryInterceptors:  []grpc.UnaryClientInterceptor{unary("outer"), unary("inner")},
		StreamInterceptors: []grpc.StreamClientInterceptor{stream},
	})
	client := testpb.NewTestServiceClient(p)
	ctx := testContext(t, 20*time.Second)

	if _, err := client.UnaryCall(ctx, &testpb.SimpleRequest{}); err != nil {
		t.Fatal(err)
	}
	want := []string{"outer in", "inner in", "inner out: OK", "outer out: OK"}
	if got := log.all(); !equal(got, want) {
		t.Fatalf("one call: the interceptors saw %q, want %q", got, want)
	}

	// The only slot is busy for 500ms: a call with 20ms fails in the pool.
	busy := make(chan error, 1)
	go func() {
		_, err := client.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: 500})
		busy <- err
	}()
	if !waitFor(10*time.Second, func() bool { return p.Stats().Leases == 1 }) {
		t.Fatal("the long call never took the slot")
	}
	short, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	_, err := client.UnaryCall(short, &testpb.SimpleRequest{})
	cancel()
	var pe *PoolError
	if !errors.As(err, &pe) || status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("a call that waited past its deadline: %v, want the pool's DeadlineExceeded", err)
	}
	if err := <-busy; err != nil {
		t.Fatal(err)
	}
	got := log.all()[4:]
	if n := count(got, "outer out: DeadlineExceeded"); n != 1 {
		t.Fatalf("the pool's failure reached the outer interceptor %d times, want once: %q", n, got)
	}
	if n := count(got, "outer in"); n != 2 {
		t.Fatalf("two calls entered the outer interceptor %d times: %q", n, got)
	}

	// A stream passes through the stream interceptor once.
	sctx, cancelStream := context.WithCancel(ctx)
	st, err := client.StreamingOutputCall(sctx, &testpb.StreamingOutputCallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Recv(); err != nil {
		t.Fatal(err)
	}
	cancelStream() // the test server streams until the caller leaves
	if n := count(log.all(), "stream: OK"); n != 1 {
		t.Fatalf("the stream interceptor ran %d times for one stream, want 1", n)
	}
}

func equal(a, b []string) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

func count(lines []string, s string) int {
	n := 0
	for _, l := range lines {
		if l == s {
			n++
		}
	}
	return n
}

// The interceptors given in Options see a nil cc: the call is the pool's,
// on no one *grpc.ClientConn of its own.
func TestPoolInterceptorsGetANilClientConn(t *testing.T) {
	srv := startTestServer(t, 10)
	var sawCC bool
	ic := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoke grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		sawCC = cc != nil
		return invoke(ctx, method, req, reply, cc, opts...)
	}
	p := newTestPool(t, srv.addr, Options{UnaryInterceptors: []grpc.UnaryClientInterceptor{ic}})
	if _, err := testpb.NewTestServiceClient(p).UnaryCall(context.Background(), &testpb.SimpleRequest{}); err != nil {
		t.Fatal(err)
	}
	if sawCC {
		t.Fatal("interceptor's cc is not nil")
	}
}
