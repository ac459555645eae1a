package main

import (
	"context"
	"fmt"
	"sync/atomic"

	"github.com/shoalpool/shoal/shoalgrpc"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
)

// conn is what a contender hands the workload: something generated clients
// take, and a way to close it.
type conn interface {
	grpc.ClientConnInterface
	Close() error
}

// contender is one way of sending gRPC calls to a target.
type contender struct {
	name string
	open func(target string) (conn, error)
}

// contenders returns one-conn, round-robin over n and shoalgrpc with
// MaxConns n, in the order the tables show them.
func contenders(n int) []contender {
	return []contender{
		{name: "one-conn", open: func(target string) (conn, error) {
			return grpc.NewClient(target, plaintext())
		}},
		{name: fmt.Sprintf("rr-%d", n), open: func(target string) (conn, error) {
			return newRoundRobin(target, n)
		}},
		{name: "shoalgrpc", open: func(target string) (conn, error) {
			return shoalgrpc.NewClient(target, shoalgrpc.Options{MaxConns: n}, plaintext())
		}},
	}
}

func plaintext() grpc.DialOption {
	return grpc.WithTransportCredentials(insecure.NewCredentials())
}

// roundRobin sends each call to the next of its connections, whatever
// their load.
type roundRobin struct {
	conns []*grpc.ClientConn
	next  atomic.Uint64
}

func newRoundRobin(target string, n int) (*roundRobin, error) {
	rr := &roundRobin{}
	for range n {
		cc, err := grpc.NewClient(target, plaintext())
		if err != nil {
			_ = rr.Close()
			return nil, err
		}
		rr.conns = append(rr.conns, cc)
	}
	return rr, nil
}

func (rr *roundRobin) pick() *grpc.ClientConn {
	return rr.conns[(rr.next.Add(1)-1)%uint64(len(rr.conns))]
}

// Invoke sends a unary call on the next connection.
func (rr *roundRobin) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	return rr.pick().Invoke(ctx, method, args, reply, opts...)
}

// NewStream opens a stream on the next connection.
func (rr *roundRobin) NewStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
	return rr.pick().NewStream(ctx, desc, method, opts...)
}

// Close closes every connection.
func (rr *roundRobin) Close() error {
	for _, cc := range rr.conns {
		_ = cc.Close()
	}
	return nil
}
