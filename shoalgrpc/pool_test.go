package shoalgrpc

import (
	"context"
	"errors"
	"io"
	"net"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/peer"
	"google.golang.org/grpc/status"
)

// 100 callers against a server allowing 10 streams per connection: the pool
// learns the limit, spreads the calls over several connections, and every
// call succeeds.
func TestUnaryCallsSpreadOverConnections(t *testing.T) {
	srv := startTestServer(t, 10)
	p := newTestPool(t, srv.addr, Options{})
	client := testpb.NewTestServiceClient(p)
	ctx := testContext(t, 60*time.Second)

	const callers, calls = 100, 5
	var wg sync.WaitGroup
	var failed atomic.Int64
	for range callers {
		wg.Go(func() {
			for range calls {
				if _, err := client.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: 20}); err != nil {
					failed.Add(1)
					t.Errorf("UnaryCall: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	if failed.Load() > 0 {
		t.Fatalf("%d calls failed", failed.Load())
	}
	conns, _ := srv.connections()
	if conns < 2 {
		t.Errorf("calls used %d connection(s); want them spread over several", conns)
	}
	p.mu.Lock()
	for c := range p.conns {
		if got := c.appliedLimit.Load(); got != 10 {
			t.Errorf("connection stream limit %d, want the server's 10", got)
		}
	}
	p.mu.Unlock()
	if s := p.Stats(); s.Leases != 0 || s.TotalConns > defaultMaxConns {
		t.Errorf("after the calls: %+v; want no leases and at most %d connections", s, defaultMaxConns)
	}
}

// A server stream holds its slot while open and gives it back when its
// context ends.
func TestStreamHoldsSlotUntilContextEnds(t *testing.T) {
	srv := startTestServer(t, 10)
	p := newTestPool(t, srv.addr, Options{MaxConns: 1})
	client := testpb.NewTestServiceClient(p)

	ctx, cancel := context.WithCancel(testContext(t, 30*time.Second))
	stream, err := client.StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	if got := p.Stats().Leases; got != 1 {
		t.Fatalf("open stream: %d leases, want 1", got)
	}
	cancel()
	if !waitFor(10*time.Second, func() bool { return p.Stats().Leases == 0 }) {
		t.Fatalf("slot still held after the stream's context ended: %+v", p.Stats())
	}
	if _, err := stream.Recv(); status.Code(err) != codes.Canceled {
		t.Errorf("Recv after cancel: %v, want Canceled", err)
	}
}

// A bidirectional stream gives its slot back as soon as Recv reports the
// end, before Recv returns.
func TestStreamReleasesOnEOF(t *testing.T) {
	srv := startTestServer(t, 10)
	p := newTestPool(t, srv.addr, Options{MaxConns: 1})
	client := testpb.NewTestServiceClient(p)
	ctx := testContext(t, 30*time.Second)

	for i := range 50 { // more streams than the connection has slots
		stream, err := client.FullDuplexCall(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if err := stream.Send(&testpb.StreamingOutputCallRequest{Payload: &testpb.Payload{Body: []byte{byte(i)}}}); err != nil {
			t.Fatal(err)
		}
		resp, err := stream.Recv()
		if err != nil || resp.GetPayload().GetBody()[0] != byte(i) {
			t.Fatalf("Recv: %v %v", resp, err)
		}
		if err := stream.CloseSend(); err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Recv(); err == nil {
			t.Fatal("Recv after CloseSend: want io.EOF")
		}
		if got := p.Stats().Leases; got != 0 {
			t.Fatalf("stream %d ended: %d leases held, want 0", i, got)
		}
	}
}

// A stream that grpc-go finishes while the caller holds it, here in Header
// after the server ended the call, gives its slot back then, before the
// caller reads its end: exactly as long as grpc-go keeps the stream open.
func TestStreamFinishedUnderCallerReleases(t *testing.T) {
	srv := startTestServer(t, 10)
	p := newTestPool(t, srv.addr, Options{MaxConns: 1})
	stream, err := testpb.NewTestServiceClient(p).FullDuplexCall(testContext(t, 30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	if err := stream.CloseSend(); err != nil {
		t.Fatal(err)
	}
	// The server returns at the CloseSend with no message: Header sees
	// the end, and grpc-go finishes the stream.
	if _, err := stream.Header(); err != nil {
		t.Fatal(err)
	}
	if !waitFor(10*time.Second, func() bool { return p.Stats().Leases == 0 }) {
		t.Fatalf("slot still held after grpc-go finished the stream: %+v", p.Stats())
	}
	if _, err := stream.Recv(); err != io.EOF {
		t.Errorf("Recv after the stream finished: %v, want io.EOF", err)
	}
}

// A stream the caller drops without ending it is canceled once the garbage
// collector finds it, which gives its slot back.
func TestAbandonedStreamIsReclaimed(t *testing.T) {
	srv := startTestServer(t, 10)
	p := newTestPool(t, srv.addr, Options{MaxConns: 1})
	client := testpb.NewTestServiceClient(p)

	func() {
		stream, err := client.StreamingOutputCall(context.Background(), &testpb.StreamingOutputCallRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Recv(); err != nil {
			t.Fatal(err)
		}
	}()
	if got := p.Stats().Leases; got != 1 {
		t.Fatalf("open stream: %d leases, want 1", got)
	}
	reclaimed := waitFor(10*time.Second, func() bool {
		runtime.GC()
		return p.Stats().Leases == 0
	})
	if !reclaimed {
		t.Fatalf("abandoned stream still holds its slot: %+v", p.Stats())
	}
}

// With every slot of the only connection taken by open streams, one more
// stream waits and then fails with the caller's deadline, in gRPC's terms
// and the pool's.
func TestFullPoolWaitsThenFailsWithDeadline(t *testing.T) {
	srv := startTestServer(t, 10)
	p := newTestPool(t, srv.addr, Options{MaxConns: 1})
	client := testpb.NewTestServiceClient(p)
	ctx, cancel := context.WithCancel(testContext(t, 30*time.Second))
	defer cancel()

	// Kept referenced to the end: the pool cancels a stream its caller
	// dropped once the garbage collector finds it.
	var open []grpc.ServerStreamingClient[testpb.StreamingOutputCallResponse]
	defer runtime.KeepAlive(&open)
	for range 10 {
		stream, err := client.StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Recv(); err != nil {
			t.Fatal(err)
		}
		open = append(open, stream)
	}
	short, cancelShort := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancelShort()
	_, err := client.UnaryCall(short, &testpb.SimpleRequest{})
	if status.Code(err) != codes.DeadlineExceeded || !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("call on a full pool: %v; want DeadlineExceeded", err)
	}
	var pe *PoolError
	if !errors.As(err, &pe) || !strings.Contains(err.Error(), "(waited ") {
		t.Errorf("error %q should be a *PoolError saying what it waited for", err)
	}
	if _, max := srv.connections(); max > 10 {
		t.Errorf("server saw %d streams on one connection, more than its limit", max)
	}
}

// The server closes one connection in the middle of load: only the calls
// running on that connection fail, and the pool carries on.
func TestServerClosesOneConnection(t *testing.T) {
	srv := startTestServer(t, 10)
	p := newTestPool(t, srv.addr, Options{MaxConns: 4})
	client := testpb.NewTestServiceClient(p)
	ctx := testContext(t, 60*time.Second)

	const callers, calls = 40, 12
	type failure struct {
		err   error
		local string // the client's address for the call's connection
	}
	var (
		mu        sync.Mutex
		failures  []failure
		succeeded atomic.Int64
		wg        sync.WaitGroup
	)
	for range callers {
		wg.Go(func() {
			for range calls {
				var pr peer.Peer
				_, err := client.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: 50}, grpc.Peer(&pr))
				if err == nil {
					succeeded.Add(1)
					continue
				}
				local := ""
				if pr.LocalAddr != nil {
					local = pr.LocalAddr.String()
				}
				mu.Lock()
				failures = append(failures, failure{err, local})
				mu.Unlock()
			}
		})
	}

	// Once the load is spread, close the busiest connection from the
	// server's side.
	var victim string
	if !waitFor(20*time.Second, func() bool {
		conns, _ := srv.connections()
		c, n := srv.busiest()
		if conns >= 3 && n >= 5 {
			victim = c
			return true
		}
		return false
	}) {
		t.Fatal("load never spread over several connections")
	}
	if !srv.lis.closeConn(victim) {
		t.Fatalf("could not close the server's side of %s", victim)
	}
	wg.Wait()

	if len(failures) == 0 {
		t.Fatal("no call failed; the closed connection should have had calls running")
	}
	for _, f := range failures {
		if f.local != victim {
			t.Errorf("a call on connection %q failed (%v); only calls on %s should", f.local, f.err, victim)
		}
		if status.Code(f.err) != codes.Unavailable {
			t.Errorf("failed call: %v; want Unavailable", f.err)
		}
	}
	if len(failures) > 10 {
		t.Errorf("%d calls failed; the closed connection carried at most 10", len(failures))
	}
	t.Logf("%d calls succeeded, %d failed, all on the closed connection", succeeded.Load(), len(failures))
	// And the pool still works, on the surviving and reconnected connections.
	for range 20 {
		if _, err := client.UnaryCall(ctx, &testpb.SimpleRequest{}); err != nil {
			t.Fatalf("call after the close: %v", err)
		}
	}
}

// Connections past MaxLifetime drain: no call fails, and old connections
// close once their calls end.
func TestMaxLifetimeDrainsWithoutFailingCalls(t *testing.T) {
	srv := startTestServer(t, 10)
	p := newTestPool(t, srv.addr, Options{MaxConns: 6, MaxLifetime: 150 * time.Millisecond, LifetimeJitter: 50 * time.Millisecond})
	client := testpb.NewTestServiceClient(p)
	ctx := testContext(t, 60*time.Second)

	var wg sync.WaitGroup
	for range 20 {
		wg.Go(func() {
			for range 8 {
				if _, err := client.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: 60}); err != nil {
					t.Errorf("UnaryCall across lifetimes: %v", err)
					return
				}
			}
		})
	}
	wg.Wait()
	// Closes run in the background: wait for the first to be counted.
	if !waitFor(10*time.Second, func() bool { return p.Stats().Closed > 0 }) {
		t.Errorf("no connection closed for its lifetime: %+v", p.Stats())
	}
}

// A connection in TRANSIENT_FAILURE is not chosen while another is READY.
func TestTransientFailureSkipped(t *testing.T) {
	srv := startTestServer(t, 10)
	p, err := NewClient(srv.addr, Options{MaxConns: 2}, insecureCreds())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	var refuse sync.Map // *conn -> true: its reconnections fail
	locals := map[*conn]string{}
	var localsMu sync.Mutex
	p.netDial = func(ctx context.Context, c *conn, network, addr string) (net.Conn, error) {
		if _, ok := refuse.Load(c); ok {
			return nil, errors.New("test: reconnection refused")
		}
		nc, err := netDial(ctx, c, network, addr)
		if err == nil {
			localsMu.Lock()
			locals[c] = nc.LocalAddr().String()
			localsMu.Unlock()
		}
		return nc, err
	}
	client := testpb.NewTestServiceClient(p)
	ctx, cancel := context.WithCancel(testContext(t, 30*time.Second))
	defer cancel()

	// Eleven open streams need both connections.
	// (Kept referenced until ended: the pool cancels a dropped stream once
	// the garbage collector finds it, which would free a slot too early.)
	streamCtx, endStreams := context.WithCancel(ctx)
	var open []grpc.ServerStreamingClient[testpb.StreamingOutputCallResponse]
	for range 11 {
		stream, err := client.StreamingOutputCall(streamCtx, &testpb.StreamingOutputCallRequest{})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := stream.Recv(); err != nil {
			t.Fatal(err)
		}
		open = append(open, stream)
	}
	endStreams()
	runtime.KeepAlive(open)
	if !waitFor(10*time.Second, func() bool { return p.Stats().Leases == 0 }) {
		t.Fatalf("streams not released: %+v", p.Stats())
	}
	p.mu.Lock()
	var failing *conn
	for c := range p.conns {
		failing = c
		break
	}
	n := len(p.conns)
	p.mu.Unlock()
	if n != 2 {
		t.Fatalf("%d connections open, want 2", n)
	}

	// Break one: the server closes it and it cannot reconnect.
	refuse.Store(failing, true)
	localsMu.Lock()
	local := locals[failing]
	localsMu.Unlock()
	if !srv.lis.closeConn(local) {
		t.Fatal("could not close the connection")
	}
	if !waitFor(10*time.Second, func() bool {
		failing.cc.Connect()
		return failing.cc.GetState() == connectivity.TransientFailure
	}) {
		t.Fatalf("connection state %s, want TRANSIENT_FAILURE", failing.cc.GetState())
	}

	var wg sync.WaitGroup
	for range 10 {
		wg.Go(func() {
			for range 3 {
				if _, err := client.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: 20}); err != nil {
					t.Errorf("call with a READY connection available: %v", err)
				}
			}
		})
	}
	wg.Wait()
	p.mu.Lock()
	_, stillOpen := p.conns[failing]
	p.mu.Unlock()
	if stillOpen {
		t.Error("the failing connection is still in the pool; it should have been retired when picked")
	}
}

// Close fails the calls in flight, like grpc.ClientConn.Close, and later
// calls fail at once with Canceled and shoal.ErrClosed.
func TestCloseFailsCallsInFlight(t *testing.T) {
	srv := startTestServer(t, 10)
	p, err := NewClient(srv.addr, Options{}, insecureCreds())
	if err != nil {
		t.Fatal(err)
	}
	client := testpb.NewTestServiceClient(p)
	ctx := testContext(t, 30*time.Second)

	errs := make(chan error, 5)
	for range 5 {
		go func() {
			_, err := client.UnaryCall(ctx, &testpb.SimpleRequest{ResponseSize: 20_000})
			errs <- err
		}()
	}
	stream, err := client.StreamingOutputCall(ctx, &testpb.StreamingOutputCallRequest{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := stream.Recv(); err != nil {
		t.Fatal(err)
	}
	if !waitFor(10*time.Second, func() bool { return p.Stats().Leases == 6 }) {
		t.Fatalf("calls did not start: %+v", p.Stats())
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	for range 5 {
		if err := <-errs; status.Code(err) != codes.Canceled {
			t.Errorf("call in flight at Close: %v, want Canceled", err)
		}
	}
	if _, err := stream.Recv(); err == nil {
		t.Error("stream survived Close")
	}
	_, err = client.UnaryCall(ctx, &testpb.SimpleRequest{})
	if status.Code(err) != codes.Canceled || !errors.Is(err, shoal.ErrClosed) {
		t.Errorf("call after Close: %v, want Canceled wrapping shoal.ErrClosed", err)
	}
	if s := p.Stats(); s.TotalConns != 0 || s.Leases != 0 {
		t.Errorf("after Close: %+v", s)
	}
	if err := p.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

// A server that refuses connections fails calls promptly with Unavailable
// and the dial's reason, not at the caller's deadline.
func TestDialFailureReachesCaller(t *testing.T) {
	p := newTestPool(t, "127.0.0.1:1", Options{})
	ctx := testContext(t, 30*time.Second)
	_, err := testpb.NewTestServiceClient(p).UnaryCall(ctx, &testpb.SimpleRequest{})
	if status.Code(err) != codes.Unavailable || !errors.Is(err, shoal.ErrDial) {
		t.Fatalf("call to a closed port: %v; want Unavailable wrapping shoal.ErrDial", err)
	}
	if !strings.Contains(err.Error(), "refused") {
		t.Errorf("error %q does not say why the dial failed", err)
	}
	if ctx.Err() != nil {
		t.Error("the call waited until its deadline")
	}
}

// Credentials in the target never show in errors or String, wherever the
// target's form puts them: in the resolver's authority, in the endpoint
// after an empty authority, in a bare host:port, in the query.
func TestTargetCredentialsRedacted(t *testing.T) {
	for _, target := range []string{
		"dns://admin:hunter2@127.0.0.1:1/127.0.0.1:1?token=s3cr3t",
		"passthrough:///admin:hunter2@127.0.0.1:1",
		"dns:///admin:hunter2@127.0.0.1:1",
		"admin:hunter2@127.0.0.1:1",
	} {
		p := newTestPool(t, target, Options{DialTimeout: 2 * time.Second})
		ctx := testContext(t, 10*time.Second)
		err := p.Invoke(ctx, "/grpc.testing.TestService/EmptyCall", &testpb.Empty{}, &testpb.Empty{})
		if err == nil {
			t.Fatalf("%s: a call to a port nobody listens on succeeded", redactTarget(target))
		}
		for _, s := range []string{err.Error(), p.String(), redactTarget(target)} {
			if strings.Contains(s, "hunter2") || strings.Contains(s, "s3cr3t") || strings.Contains(s, "admin") {
				t.Errorf("credentials shown: %q", s)
			}
		}
	}
	if got, want := redactTarget("dns:///admin:hunter2@localhost:1"), "dns:///REDACTED@localhost:1"; got != want {
		t.Errorf("redactTarget kept %q, want %q: the scheme stays", got, want)
	}
}

// NewClient names the option that is wrong.
func TestOptionsValidated(t *testing.T) {
	cases := []struct {
		opts  Options
		field string
	}{
		{Options{MaxConns: -1}, "MaxConns"},
		{Options{MaxConns: 2, MinConns: 3}, "MinConns"},
		{Options{MaxStreams: -5}, "MaxStreams"},
		{Options{MaxDialing: -1}, "MaxDialing"},
	}
	for _, c := range cases {
		_, err := NewClient("127.0.0.1:1", c.opts, insecureCreds())
		if err == nil || !strings.Contains(err.Error(), "Options."+c.field) {
			t.Errorf("NewClient(%+v): %v; want an error naming Options.%s", c.opts, err, c.field)
		}
	}
}
