package shoalgrpc

import (
	"context"

	"google.golang.org/grpc"
)

// chainUnary returns invoke wrapped in interceptors, the first outermost.
func chainUnary(interceptors []grpc.UnaryClientInterceptor, invoke grpc.UnaryInvoker) grpc.UnaryInvoker {
	for i := len(interceptors) - 1; i >= 0; i-- {
		ic, next := interceptors[i], invoke
		invoke = func(ctx context.Context, method string, req, reply any, cc *grpc.ClientConn, opts ...grpc.CallOption) error {
			return ic(ctx, method, req, reply, cc, next, opts...)
		}
	}
	return invoke
}

// chainStream returns stream wrapped in interceptors, the first outermost.
func chainStream(interceptors []grpc.StreamClientInterceptor, stream grpc.Streamer) grpc.Streamer {
	for i := len(interceptors) - 1; i >= 0; i-- {
		ic, next := interceptors[i], stream
		stream = func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, opts ...grpc.CallOption) (grpc.ClientStream, error) {
			return ic(ctx, desc, cc, method, next, opts...)
		}
	}
	return stream
}
