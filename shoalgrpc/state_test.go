package shoalgrpc

import (
	"context"
	"net"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	testpb "google.golang.org/grpc/interop/grpc_testing"
	"google.golang.org/grpc/status"
)

// TestGetStateTargetConnect: a new pool is Idle and has dialled nothing;
// Connect dials in the background and the pool turns Ready without a call;
// Close makes it Shutdown. Target is the target as given.
func TestGetStateTargetConnect(t *testing.T) {
	srv := startTestServer(t, 100)
	p := newTestPool(t, srv.addr, Options{MaxConns: 2})
	if got := p.Target(); got != srv.addr {
		t.Fatalf("Target() = %q, want %q", got, srv.addr)
	}
	if st := p.GetState(); st != connectivity.Idle {
		t.Fatalf("a new pool's state is %v, want Idle", st)
	}
	if s := p.Stats(); s.Dials != 0 {
		t.Fatalf("%d dials before any call or Connect", s.Dials)
	}
	p.Connect()
	if !waitFor(10*time.Second, func() bool { return p.GetState() == connectivity.Ready }) {
		t.Fatalf("state %v after Connect, want Ready (stats %v)", p.GetState(), p.Stats())
	}
	if s := p.Stats(); s.TotalConns != 1 || s.Leases != 0 {
		t.Fatalf("after Connect: %v, want one connection open and no call on it", s)
	}
	p.Connect() // connected already: no second dial
	if s := p.Stats(); s.Dials != 1 {
		t.Fatalf("%d dials after a second Connect, want 1", s.Dials)
	}
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if st := p.GetState(); st != connectivity.Shutdown {
		t.Fatalf("state %v after Close, want Shutdown", st)
	}
	p.Connect() // nothing on a closed pool
}

// TestGetStateTransientFailure: a pool whose dials fail says so.
func TestGetStateTransientFailure(t *testing.T) {
	addr := refusedAddr(t)
	p := newTestPool(t, addr, Options{MaxConns: 1, DialTimeout: 2 * time.Second})
	p.Connect()
	if !waitFor(10*time.Second, func() bool { return p.GetState() == connectivity.TransientFailure }) {
		t.Fatalf("state %v with every dial refused, want TransientFailure (stats %v)", p.GetState(), p.Stats())
	}
}

// TestWaitForReadyWaitsForTheServer: with the server down, a plain call
// fails once the pool counts it down, and a grpc.WaitForReady call waits,
// within its deadline, until the server is back, as on a grpc.ClientConn.
func TestWaitForReadyWaitsForTheServer(t *testing.T) {
	addr := refusedAddr(t)
	p := newTestPool(t, addr, Options{MaxConns: 1, DialTimeout: 2 * time.Second})
	client := testpb.NewTestServiceClient(p)
	ctx := testContext(t, 30*time.Second)
	if _, err := client.UnaryCall(ctx, &testpb.SimpleRequest{}); status.Code(err) != codes.Unavailable {
		t.Fatalf("a call with the server down: %v, want Unavailable", err)
	}
	done := make(chan error, 1)
	go func() {
		_, err := client.UnaryCall(ctx, &testpb.SimpleRequest{}, grpc.WaitForReady(true))
		done <- err
	}()
	time.Sleep(300 * time.Millisecond)
	select {
	case err := <-done:
		t.Fatalf("a WaitForReady call returned (%v) while the server was still down", err)
	default:
	}
	l, err := net.Listen("tcp", addr)
	if err != nil {
		t.Fatalf("listen again on %s: %v", addr, err)
	}
	startTestServerOn(t, l, 100)
	if err := <-done; err != nil {
		t.Fatalf("WaitForReady call after the server came back: %v", err)
	}

	// Its deadline still bounds it.
	short, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	p2 := newTestPool(t, "127.0.0.1:1", Options{MaxConns: 1, DialTimeout: 2 * time.Second})
	_, err = testpb.NewTestServiceClient(p2).UnaryCall(short, &testpb.SimpleRequest{}, grpc.WaitForReady(true))
	if status.Code(err) != codes.DeadlineExceeded {
		t.Fatalf("a WaitForReady call whose deadline passed: %v, want DeadlineExceeded", err)
	}
}

// refusedAddr returns a loopback address nothing listens on: dials to it
// are refused until a test listens there again.
func refusedAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	return addr
}

// GetState is Connecting while a dial is in flight: the server accepts and
// never speaks HTTP/2, so the dial stays in flight.
func TestGetStateIsConnectingWhileADialIsInFlight(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() { // accepts, never speaks HTTP/2: the dial stays in flight
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			defer c.Close()
		}
	}()
	p := newTestPool(t, ln.Addr().String(), Options{MaxConns: 1})
	p.Connect()
	if !waitFor(10*time.Second, func() bool { return p.Stats().Dialing == 1 }) {
		t.Fatal("no dial")
	}
	if st := p.GetState(); st != connectivity.Connecting {
		t.Fatalf("state %v with a dial in flight, want Connecting", st)
	}
}
