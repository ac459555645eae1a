package embedded

import (
	"context"
	"fmt"
	"net"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// GRPCServer is a TLS gRPC server offering the standard health service
// (grpc.health.v1.Health), with at most MaxStreams concurrent streams per
// connection. Each Check waits for the configured work before answering
// SERVING, and stops waiting when the call is cancelled.
type GRPCServer struct {
	srv  *grpc.Server
	ln   net.Listener
	done chan struct{}
}

// StartGRPCServer listens on a random loopback port. work is the simulated
// time each Check takes (capped at MaxWork).
func StartGRPCServer(cert *Cert, work time.Duration) (*GRPCServer, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("embedded: grpc server: %w", err)
	}
	srv := grpc.NewServer(
		grpc.Creds(credentials.NewTLS(cert.ServerTLS())),
		grpc.MaxConcurrentStreams(MaxStreams),
	)
	healthpb.RegisterHealthServer(srv, &slowHealth{work: min(work, MaxWork)})
	s := &GRPCServer{srv: srv, ln: ln, done: make(chan struct{})}
	go func() {
		defer close(s.done)
		srv.Serve(ln) // returns when Stop closes the listener
	}()
	return s, nil
}

// Addr returns the server's host:port.
func (s *GRPCServer) Addr() string { return s.ln.Addr().String() }

// Close stops the server at once, cancelling calls in flight, and waits
// for it to end.
func (s *GRPCServer) Close() error {
	s.srv.Stop()
	<-s.done
	return nil
}

// slowHealth answers health checks after a delay.
type slowHealth struct {
	healthpb.UnimplementedHealthServer
	work time.Duration
}

// Check answers SERVING after the configured work.
func (h *slowHealth) Check(ctx context.Context, _ *healthpb.HealthCheckRequest) (*healthpb.HealthCheckResponse, error) {
	if h.work > 0 {
		t := time.NewTimer(h.work)
		select {
		case <-t.C:
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		}
	}
	return &healthpb.HealthCheckResponse{Status: healthpb.HealthCheckResponse_SERVING}, nil
}
