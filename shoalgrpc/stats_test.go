package shoalgrpc

import (
	"context"
	"errors"
	"fmt"
	"runtime"
	"slices"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/resolver/manual"
	"google.golang.org/grpc/stats"
	"google.golang.org/grpc/status"
)

// statsRecorder is a stats.Handler that keeps, for every call, what
// TagRPC was told and the events HandleRPC got, in order.
type statsRecorder struct {
	mu    sync.Mutex
	calls []*recordedCall
}

type recordedCall struct {
	info   stats.RPCTagInfo
	events []stats.RPCStats
}

type recordedCallKey struct{}

func (r *statsRecorder) TagRPC(ctx context.Context, info *stats.RPCTagInfo) context.Context {
	c := &recordedCall{info: *info}
	r.mu.Lock()
	r.calls = append(r.calls, c)
	r.mu.Unlock()
	return context.WithValue(ctx, recordedCallKey{}, c)
}

func (r *statsRecorder) HandleRPC(ctx context.Context, s stats.RPCStats) {
	c, ok := ctx.Value(recordedCallKey{}).(*recordedCall)
	if !ok {
		panic(fmt.Sprintf("HandleRPC(%T) without TagRPC", s))
	}
	r.mu.Lock()
	c.events = append(c.events, s)
	r.mu.Unlock()
}

func (r *statsRecorder) TagConn(ctx context.Context, _ *stats.ConnTagInfo) context.Context {
	return ctx
}

func (r *statsRecorder) HandleConn(context.Context, stats.ConnStats) {}

// of returns what the recorder saw of the calls to method, each as a line
// of its events: "Begin(client, failfast) End(Unavailable)".
func (r *statsRecorder) of(method string) []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []string
	for _, c := range r.calls {
		if c.info.FullMethodName != method {
			continue
		}
		line := ""
		for _, e := range c.events {
			switch e := e.(type) {
			case *stats.Begin:
				line += fmt.Sprintf("Begin(client=%t failfast=%t clientstream=%t serverstream=%t) ",
					e.Client, e.FailFast, e.IsClientStream, e.IsServerStream)
			case *stats.End:
				line += fmt.Sprintf("End(client=%t %s)", e.Client, status.Code(e.Error))
			default:
				line += fmt.Sprintf("%T ", e)
			}
		}
		out = append(out, fmt.Sprintf("failfast=%t: %s", c.info.FailFast, line))
	}
	return out
}

const (
	unaryMethod     = "/grpc.testing.TestService/UnaryCall"
	streamingMethod = "/grpc.testing.TestService/StreamingOutputCall"
)

// TestStatsHandlerSeesCallsToADownServer: a stats handler given as a dial
// option sees a call that fails because the server is down exactly as it
// sees it on a grpc.ClientConn: TagRPC, then Begin and End with
// codes.Unavailable, for unary calls and streams.
func TestStatsHandlerSeesCallsToADownServer(t *testing.T) {
	const down = "127.0.0.1:1"
	call := func(cc grpc.ClientConnInterface) {
		client := testpb.NewTestServiceClient(cc)
		ctx := testContext(t, 20*time.Second)
		if _, err := client.UnaryCall(ctx, &testpb.SimpleRequest{}); status.Code(err) != codes.Unavailable {
			t.Errorf("unary call to a down server: %v", err)
		}
		if _, err := client.StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{}); status.Code(err) != codes.Unavailable {
			t.Errorf("stream to a down server: %v", err)
		}
	}

	want := &statsRecorder{}
	cc, err := grpc.NewClient(down, insecureCreds(), grpc.WithStatsHandler(want))
	if err != nil {
		t.Fatal(err)
	}
	call(cc)
	_ = cc.Close()

	got := &statsRecorder{}
	p, err := NewClient(down, Options{}, insecureCreds(), grpc.WithStatsHandler(got))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	call(p)

	for _, m := range []string{unaryMethod, streamingMethod} {
		if len(want.of(m)) != 1 {
			t.Fatalf("grpc.ClientConn: %s: %q", m, want.of(m))
		}
		if !slices.Equal(got.of(m), want.of(m)) {
			t.Errorf("%s: the pool's stats handler saw\n%q\nwhere grpc.ClientConn's saw\n%q", m, got.of(m), want.of(m))
		}
	}
}

// holdOnlySlot opens a stream that holds the only stream slot of p (MaxConns
// 1, MaxStreams 1) until the test ends.
func holdOnlySlot(t *testing.T, p *Pool) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	t.Cleanup(cancel)
	s, err := testpb.NewTestServiceClient(p).StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Recv(); err != nil {
		t.Fatal(err)
	}
	// A stream dropped unreachable is canceled when the garbage collector
	// finds it, which would free the slot mid-test.
	t.Cleanup(func() { runtime.KeepAlive(s) })
}

// TestStatsHandlerSeesCallsFailedInThePool: the calls the pool fails while
// they wait for a stream (their deadline passed, MaxWaiters, the pool
// closed under them) reach a stats handler given as a dial option as
// TagRPC, Begin and End with the code the caller gets; a call made after
// Close reaches none, as on a grpc.ClientConn.
func TestStatsHandlerSeesCallsFailedInThePool(t *testing.T) {
	srv := startTestServer(t, 100)
	rec := &statsRecorder{}
	p, err := NewClient(srv.addr, Options{MaxConns: 1, MaxStreams: 1, MaxWaiters: 1},
		insecureCreds(), grpc.WithStatsHandler(rec))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	client := testpb.NewTestServiceClient(p)
	holdOnlySlot(t, p)
	const failed = "failfast=true: Begin(client=true failfast=true clientstream=false serverstream=false) End(client=true %s)"

	// Its deadline passes while it waits for the slot.
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	_, err = client.UnaryCall(ctx, &testpb.SimpleRequest{})
	cancel()
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("call waiting past its deadline: %v", err)
	}
	if got, want := rec.of(unaryMethod), []string{fmt.Sprintf(failed, codes.DeadlineExceeded)}; !slices.Equal(got, want) {
		t.Errorf("deadline passed in the pool: the stats handler saw\n%q\nwant\n%q", got, want)
	}

	// One waits; the next is one too many.
	waiterDone := make(chan error, 1)
	go func() {
		_, err := client.UnaryCall(testContext(t, 20*time.Second), &testpb.SimpleRequest{})
		waiterDone <- err
	}()
	if !waitFor(10*time.Second, func() bool { return p.Stats().Waiting == 1 }) {
		t.Fatal("the waiter never waited")
	}
	if _, err := client.UnaryCall(testContext(t, 20*time.Second), &testpb.SimpleRequest{}); status.Code(err) != codes.ResourceExhausted {
		t.Fatalf("call past MaxWaiters: %v", err)
	}
	want := []string{fmt.Sprintf(failed, codes.DeadlineExceeded), fmt.Sprintf(failed, codes.ResourceExhausted)}
	if got := rec.of(unaryMethod); !slices.Equal(got, want) {
		t.Errorf("MaxWaiters: the stats handler saw\n%q\nwant\n%q", got, want)
	}

	// The waiter is failed by Close, which returns after its events.
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-waiterDone; status.Code(err) != codes.Canceled {
		t.Fatalf("waiter at Close: %v", err)
	}
	want = append(want, fmt.Sprintf(failed, codes.Canceled))
	if got := rec.of(unaryMethod); !slices.Equal(got, want) {
		t.Errorf("Close: the stats handler saw\n%q\nwant\n%q", got, want)
	}

	// After Close: no events, as grpc.ClientConn.
	if _, err := client.UnaryCall(testContext(t, 20*time.Second), &testpb.SimpleRequest{}); status.Code(err) != codes.Canceled {
		t.Fatalf("call after Close: %v", err)
	}
	if got := rec.of(unaryMethod); !slices.Equal(got, want) {
		t.Errorf("after Close: the stats handler saw\n%q\nwant\n%q", got, want)
	}
}

// TestDialOptionInterceptorsSeePoolFailures: an interceptor given as a
// dial option sees a call the pool fails, with the pool's error, and what
// it returns is what the caller gets, as on a grpc.ClientConn.
func TestDialOptionInterceptorsSeePoolFailures(t *testing.T) {
	var seen []error
	var mu sync.Mutex
	wrapped := errors.New("wrapped by the interceptor")
	intercept := func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, invoker grpc.UnaryInvoker, opts ...grpc.CallOption) error {
		err := invoker(ctx, method, req, reply, cc, opts...)
		mu.Lock()
		seen = append(seen, err)
		mu.Unlock()
		if err != nil {
			return fmt.Errorf("%w: %w", wrapped, err)
		}
		return nil
	}
	p, err := NewClient("127.0.0.1:1", Options{}, insecureCreds(), grpc.WithChainUnaryInterceptor(intercept))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	err = p.Invoke(testContext(t, 20*time.Second), unaryMethod, &testpb.SimpleRequest{}, &testpb.SimpleResponse{})
	var pe *PoolError
	if !errors.Is(err, wrapped) || !errors.As(err, &pe) || pe.Code != codes.Unavailable {
		t.Errorf("the caller got %v, not the interceptor's error around the pool's", err)
	}
	mu.Lock()
	defer mu.Unlock()
	if len(seen) != 1 || !errors.As(seen[0], &pe) {
		t.Errorf("the interceptor saw %v", seen)
	}
}

// TestFailureChannelKeepsItsResolver: a resolver of the caller's for the
// target's scheme (one that never reports, here) does not hold up the
// failure channel: a call the pool fails still reaches the stats handler.
func TestFailureChannelKeepsItsResolver(t *testing.T) {
	silent := manual.NewBuilderWithScheme("shoalsilent")
	rec := &statsRecorder{}
	p, err := NewClient("shoalsilent:///nowhere", Options{DialTimeout: 200 * time.Millisecond},
		insecureCreds(), grpc.WithResolvers(silent), grpc.WithStatsHandler(rec))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	_, err = testpb.NewTestServiceClient(p).UnaryCall(testContext(t, 20*time.Second), &testpb.SimpleRequest{})
	if status.Code(err) != codes.Unavailable {
		t.Fatalf("call through a resolver that never answers: %v", err)
	}
	want := []string{"failfast=true: Begin(client=true failfast=true clientstream=false serverstream=false) End(client=true Unavailable)"}
	if got := rec.of(unaryMethod); !slices.Equal(got, want) {
		t.Errorf("the stats handler saw\n%q\nwant\n%q", got, want)
	}
}
