package shoalgrpc

import (
	"context"

	"google.golang.org/grpc"
)

// Invoke performs a unary RPC on the least-loaded ready connection and
// returns after the response is received into reply. The call holds one
// stream slot until it returns. When no slot is free it waits, first come
// first served, until one is or ctx ends; an error from that wait is a
// *PoolError. Errors from the call itself are grpc-go's, unchanged.
func (p *Pool) Invoke(ctx context.Context, method string, args, reply any, opts ...grpc.CallOption) error {
	l, err := p.acquire(ctx, opts)
	if err != nil {
		return err
	}
	defer l.Release()
	return l.Value().cc.Invoke(ctx, method, args, reply, opts...)
}
