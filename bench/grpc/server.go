package main

import (
	"context"
	"net"
	"time"

	"google.golang.org/grpc"
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// sleepServer is an in-process gRPC server whose UnaryCall sleeps for
// SimpleRequest.ResponseSize milliseconds, allowing maxStreams concurrent
// streams per connection.
type sleepServer struct {
	testpb.UnimplementedTestServiceServer
	addr string
	stop func()
}

func startSleepServer(maxStreams uint32) (*sleepServer, error) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, err
	}
	srv := grpc.NewServer(grpc.MaxConcurrentStreams(maxStreams))
	s := &sleepServer{addr: lis.Addr().String()}
	testpb.RegisterTestServiceServer(srv, s)
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	s.stop = func() { srv.Stop(); <-done }
	return s, nil
}

func (s *sleepServer) UnaryCall(ctx context.Context, req *testpb.SimpleRequest) (*testpb.SimpleResponse, error) {
	t := time.NewTimer(time.Duration(req.GetResponseSize()) * time.Millisecond)
	defer t.Stop()
	select {
	case <-t.C:
		return &testpb.SimpleResponse{}, nil
	case <-ctx.Done():
		return nil, ctx.Err()
	}
}
