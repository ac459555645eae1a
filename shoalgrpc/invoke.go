package shoalgrpc

import (
	"context"

	"google.golang.org/grpc"
)

// Invoke performs a unary RPC on the least-loaded ready connection and
// returns after the response is received into reply. The call holds one
// stream slot until it returns. When no slot is free it waits, first come
// first served, until one is or ctx ends; an error from that wait is a
// *PoolError, which goes through the interceptors and stats handlers given
// as dial options as a call failed before it is sent does on a
// grpc.ClientConn (see the package doc). Errors from the call itself are
// grpc-go's, unchanged. Options.UnaryInterceptors run around all of it.
func (p *Pool) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	if p.unary != nil {
		return p.unary(ctx, method, args, reply, nil, opts...)
	}
	return p.invoke(ctx, method, args, reply, nil, opts...)
}

// invoke is Invoke without the pool's interceptors, shaped as a
// grpc.UnaryInvoker for them to call.
func (p *Pool) invoke(ctx context.Context, method string, args, reply any, _ *grpc.ClientConn, opts ...grpc.CallOption) error {
	c := p.startCall()
	defer c.end()
	opts = withCall(opts, c)
	l, err := p.acquire(ctx, opts)
	if err != nil {
		if c.viaFailure {
			// Through the failure channel, for the dial options'
			// interceptors and stats handlers (failcall.go).
			c.intoInterceptors()
			defer c.outOfInterceptors()
			return p.failUnary(ctx, method, args, reply, opts, err)
		}
		return err
	}
	defer l.Release()
	c.intoInterceptors()
	defer c.outOfInterceptors()
	return l.Value().cc.Invoke(ctx, method, args, reply, opts...)
}
