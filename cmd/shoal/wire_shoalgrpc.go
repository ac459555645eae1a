package main

import (
	"context"
	"fmt"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/shoalpool/shoal/internal/embedded"
	"github.com/shoalpool/shoal/shoalgrpc"
)

// This file wires shoalgrpc, and the gRPC baseline and server it brings
// into the build, into the bench (see adapters.go).

func init() {
	newShoalGRPC = openShoalGRPC
	newPlainGRPC = openPlainGRPC
	startGRPCServer = func(cert *embedded.Cert, work time.Duration) (string, func() error, error) {
		s, err := embedded.StartGRPCServer(cert, work)
		if err != nil {
			return "", nil, err
		}
		return s.Addr(), s.Close, nil
	}
}

// Both clients get grpc.WithNoProxy: benchmark traffic goes to loopback or
// to the user's target, never through a proxy from the environment.

// grpcCredentials is TLS when the options have a configuration, plaintext
// otherwise.
func grpcCredentials(o grpcPoolOptions) grpc.DialOption {
	if o.TLS != nil {
		return grpc.WithTransportCredentials(credentials.NewTLS(o.TLS))
	}
	return grpc.WithTransportCredentials(insecure.NewCredentials())
}

// healthCheck is the call every gRPC operation makes.
func healthCheck(ctx context.Context, cc grpc.ClientConnInterface) error {
	_, err := healthpb.NewHealthClient(cc).Check(ctx, &healthpb.HealthCheckRequest{})
	return err
}

// shoalGRPCClient is a shoalgrpc pool.
type shoalGRPCClient struct{ pool *shoalgrpc.Pool }

// Call, ConnsOpened and Close implement grpcClient on the pool.
func (c shoalGRPCClient) Call(ctx context.Context) error  { return healthCheck(ctx, c.pool) }
func (c shoalGRPCClient) ConnsOpened() int64              { return c.pool.Stats().Dials }
func (c shoalGRPCClient) Close(ctx context.Context) error { return c.pool.Close() }

func openShoalGRPC(ctx context.Context, o grpcPoolOptions) (grpcClient, error) {
	pool, err := shoalgrpc.NewClient(o.Target, shoalgrpc.Options{
		MaxConns:    o.MaxConns,
		MinConns:    o.MaxConns,
		MaxStreams:  o.MaxStreams,
		DialTimeout: o.DialTimeout,
		Observer:    o.Observer,
	}, grpcCredentials(o), grpc.WithNoProxy())
	if err != nil {
		return nil, err
	}
	c := shoalGRPCClient{pool}
	if err := c.Call(ctx); err != nil { // fails fast on a server that is not there
		pool.Close()
		return nil, fmt.Errorf("first call to %s: %w", o.Target, err)
	}
	return c, nil
}

// plainGRPCClient is one grpc.ClientConn, as most programs use.
type plainGRPCClient struct{ cc *grpc.ClientConn }

// Call, ConnsOpened and Close implement grpcClient on one connection,
// which counts as opened once.
func (c plainGRPCClient) Call(ctx context.Context) error  { return healthCheck(ctx, c.cc) }
func (c plainGRPCClient) ConnsOpened() int64              { return 1 }
func (c plainGRPCClient) Close(ctx context.Context) error { return c.cc.Close() }

func openPlainGRPC(ctx context.Context, o grpcPoolOptions) (grpcClient, error) {
	cc, err := grpc.NewClient(o.Target, grpcCredentials(o), grpc.WithNoProxy())
	if err != nil {
		return nil, err
	}
	// Connect now, so that the measured period does not include it.
	ctx, cancel := context.WithTimeout(ctx, o.DialTimeout)
	defer cancel()
	cc.Connect()
	for s := cc.GetState(); s != connectivity.Ready; s = cc.GetState() {
		if !cc.WaitForStateChange(ctx, s) {
			cc.Close()
			return nil, fmt.Errorf("connecting to %s: still %s after %s", o.Target, s, o.DialTimeout)
		}
	}
	return plainGRPCClient{cc}, nil
}
