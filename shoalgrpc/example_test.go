package shoalgrpc_test

import (
	"context"
	"crypto/tls"
	"fmt"
	"log"
	"net"
	"time"

	"github.com/shoalpool/shoal/shoalgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/health"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"
)

// startHealthServer starts grpc-go's health service on loopback, allowing
// 10 streams per connection, and returns its address and a stop function.
func startHealthServer() (string, func()) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		log.Fatal(err)
	}
	srv := grpc.NewServer(grpc.MaxConcurrentStreams(10))
	healthpb.RegisterHealthServer(srv, health.NewServer())
	done := make(chan struct{})
	go func() {
		defer close(done)
		_ = srv.Serve(lis)
	}()
	return lis.Addr().String(), func() { srv.Stop(); <-done }
}

// A Pool stands in for a grpc.ClientConn: generated clients take it as it is.
func ExampleNewClient() {
	addr, stop := startHealthServer()
	defer stop()

	pool, err := shoalgrpc.NewClient(addr, shoalgrpc.Options{MaxConns: 4},
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	health := healthpb.NewHealthClient(pool)
	resp, err := health.Check(context.Background(), &healthpb.HealthCheckRequest{})
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.GetStatus())
	// Output: SERVING
}

// A stream holds a stream slot until it ends; here its context ends it.
func ExamplePool_NewStream() {
	addr, stop := startHealthServer()
	defer stop()

	pool, err := shoalgrpc.NewClient(addr, shoalgrpc.Options{},
		grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	ctx, cancel := context.WithCancel(context.Background())
	watch, err := healthpb.NewHealthClient(pool).Watch(ctx, &healthpb.HealthCheckRequest{})
	if err != nil {
		log.Fatal(err)
	}
	resp, err := watch.Recv()
	if err != nil {
		log.Fatal(err)
	}
	fmt.Println(resp.GetStatus(), "- streams in use:", pool.Stats().Leases)

	cancel() // ends the stream; its slot is free again
	for pool.Stats().Leases != 0 {
		time.Sleep(time.Millisecond)
	}
	fmt.Println("streams in use:", pool.Stats().Leases)
	// Output:
	// SERVING - streams in use: 1
	// streams in use: 0
}

// Options for a long-lived service: connections are replaced every half
// hour or so, a few minutes apart, without failing a call; two stay open
// even when idle.
func ExampleOptions() {
	opts := shoalgrpc.Options{
		MaxConns:       32,
		MinConns:       2,
		MaxLifetime:    30 * time.Minute,
		LifetimeJitter: 5 * time.Minute,
		MaxIdleTime:    5 * time.Minute,
	}
	pool, err := shoalgrpc.NewClient("dns:///api.example.com:443", opts,
		grpc.WithTransportCredentials(credentials.NewTLS(&tls.Config{})))
	if err != nil {
		fmt.Println(err)
		return
	}
	defer pool.Close()
}
