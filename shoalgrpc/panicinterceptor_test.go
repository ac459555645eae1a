package shoalgrpc

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	testpb "google.golang.org/grpc/interop/grpc_testing"
)

// TestPanickingStreamInterceptorGivesSlotBack: a stream interceptor given as
// a dial option that panics, before or after opening grpc-go's stream, does
// not keep the call's slot once the caller has recovered and its context
// has ended, as a server that recovers its handlers' panics would: else
// every such panic takes a slot for good, until the pool serves no call.
func TestPanickingStreamInterceptorGivesSlotBack(t *testing.T) {
	for _, afterStreamer := range []bool{false, true} {
		t.Run(map[bool]string{false: "before", true: "after"}[afterStreamer], func(t *testing.T) {
			srv := startTestServer(t, 10)
			ic := func(ctx context.Context, desc *grpc.StreamDesc, cc *grpc.ClientConn, method string, streamer grpc.Streamer, opts ...grpc.CallOption) (grpc.ClientStream, error) {
				if afterStreamer {
					if _, err := streamer(ctx, desc, cc, method, opts...); err != nil {
						t.Errorf("streamer: %v", err)
					}
				}
				panic("interceptor panics")
			}
			p := newTestPool(t, srv.addr, Options{MaxConns: 1, MaxStreams: 1}, grpc.WithStreamInterceptor(ic))
			func() {
				ctx, cancel := context.WithCancel(context.Background())
				defer cancel()
				defer func() {
					if recover() == nil {
						t.Error("the interceptor's panic did not reach the caller")
					}
				}()
				_, _ = testpb.NewTestServiceClient(p).FullDuplexCall(ctx)
			}()
			if !waitFor(10*time.Second, func() bool { return p.Stats().Leases == 0 }) {
				t.Fatalf("slot still held after the interceptor panicked and the call's context ended: %+v", p.Stats())
			}
		})
	}
}
