package shoalgrpc

import (
	"context"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/balancer"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/resolver"
	"google.golang.org/grpc/status"
)

// A call the pool fails before any connection has it (no connection could
// be made, its context ended while it waited for a stream, MaxWaiters, the
// pool closed) never reaches a grpc.ClientConn, so the stats handlers and
// interceptors given as dial options would never hear of it, while on one
// grpc.ClientConn they see such a call. grpc.DialOption is opaque: the
// handlers cannot be read back out of the options. So the pool keeps one
// more grpc.ClientConn, its failure channel, made from the same target and
// dial options but with a name resolver that finds no address and a
// balancer whose picker fails every call with the error the pool attached
// to it. The pool sends each call it fails through that channel, and
// grpc-go itself runs the interceptors and emits the stats events it emits
// for a call that fails before it is sent (TagRPC, Begin, End with the
// error), with the error's gRPC code: a tracer records the call as it would
// on a grpc.ClientConn, and nothing is reimplemented that grpc-go could
// change. The channel connects nowhere.

// failCallBalancerName names the failure channel's balancer.
const failCallBalancerName = "shoalgrpc_fail_call"

// failCallServiceConfig selects that balancer on the failure channel; it
// replaces any default service config among the dial options, which a
// channel that sends nothing does not need.
const failCallServiceConfig = `{"loadBalancingConfig":[{"` + failCallBalancerName + `":{}}]}`

// Balancers are registered by name, process-wide, and only from init.
func init() { balancer.Register(failCallBuilder{}) }

// newFailChannel makes the failure channel. scheme is the resolver scheme
// grpc-go chose for target (from checkDialOptions): the channel's own
// resolver takes that scheme, so the channel keeps the target grpc-go
// shows (Target, CanonicalTarget) without resolving it.
func newFailChannel(target, scheme string, dialOpts []grpc.DialOption) (*grpc.ClientConn, error) {
	// The resolver first: grpc-go takes the first one given for a scheme,
	// and one of the caller's for the same scheme might never report.
	// The service config last: the last one given wins.
	opts := make([]grpc.DialOption, 0, len(dialOpts)+2)
	opts = append(opts, grpc.WithResolvers(noAddressResolver{scheme: scheme}))
	opts = append(opts, dialOpts...)
	opts = append(opts, grpc.WithDefaultServiceConfig(failCallServiceConfig))
	return grpc.NewClient(target, opts...)
}

// replayLimit bounds the replay of a call whose context had ended: the
// picker ends it at once; this is a backstop, not a wait.
const replayLimit = time.Second

// failedCallKey keys the failure a call carries through the failure channel.
type failedCallKey struct{}

// failedCall is that failure, and what ends the context made for the
// replay once the failure is picked up.
type failedCall struct {
	err  error
	done context.CancelFunc
}

// replayContext returns the context a failed call goes through the failure
// channel with. grpc-go emits no stats for a call whose context has ended
// (it gives up before TagRPC), so a call that failed because its context
// ended goes through with a context that has not; the picker ends it as
// soon as it has failed the call, so interceptors that look at it afterwards
// see it ended, as they would have. replayLimit bounds it should anything
// on the way (an interceptor of the caller's) wait on it. The values (the
// caller's span, its metadata) are kept.
func replayContext(ctx context.Context, err error) (context.Context, context.CancelFunc) {
	cancel := context.CancelFunc(func() {})
	if ctx.Err() != nil {
		ctx, cancel = context.WithTimeout(context.WithoutCancel(ctx), replayLimit)
	}
	return context.WithValue(ctx, failedCallKey{}, &failedCall{err: err, done: cancel}), cancel
}

// failUnary sends a unary call the pool failed with err through the failure
// channel, and returns what the channel's interceptors return: err itself
// unless one of them changes it.
func (p *Pool) failUnary(ctx context.Context, method string, args, reply any, opts []grpc.CallOption, err error) error {
	rctx, cancel := replayContext(ctx, err)
	defer cancel()
	return p.failCC.Invoke(rctx, method, args, reply, opts...)
}

// failStream does the same for a stream.
func (p *Pool) failStream(ctx context.Context, desc *grpc.StreamDesc, method string, opts []grpc.CallOption, err error) (grpc.ClientStream, error) {
	rctx, cancel := replayContext(ctx, err)
	// Only a replay whose caller's context had ended needs canceling, and
	// a stream an interceptor made of the failure is over then anyway.
	defer cancel()
	return p.failCC.NewStream(rctx, desc, method, opts...)
}

// noAddressResolver is the failure channel's resolver: it reports, at once,
// that there is nothing to connect to.
type noAddressResolver struct{ scheme string }

func (r noAddressResolver) Scheme() string { return r.scheme }

func (r noAddressResolver) Build(_ resolver.Target, cc resolver.ClientConn, _ resolver.BuildOptions) (resolver.Resolver, error) {
	// The first state reported lets calls through grpc-go's wait for a
	// resolution; the balancer needs no address.
	_ = cc.UpdateState(resolver.State{})
	return r, nil
}

func (noAddressResolver) ResolveNow(resolver.ResolveNowOptions) {}
func (noAddressResolver) Close()                                {}

// failCallBuilder builds the failure channel's balancer.
type failCallBuilder struct{}

func (failCallBuilder) Name() string { return failCallBalancerName }

func (failCallBuilder) Build(cc balancer.ClientConn, _ balancer.BuildOptions) balancer.Balancer {
	return &failCallBalancer{cc: cc}
}

// failCallBalancer makes no connection and installs failCallPicker. The
// channel reports TRANSIENT_FAILURE: it carries no call.
type failCallBalancer struct{ cc balancer.ClientConn }

func (b *failCallBalancer) UpdateClientConnState(balancer.ClientConnState) error {
	b.cc.UpdateState(balancer.State{ConnectivityState: connectivity.TransientFailure, Picker: failCallPicker{}})
	return nil
}

func (b *failCallBalancer) ResolverError(error) {
	b.cc.UpdateState(balancer.State{ConnectivityState: connectivity.TransientFailure, Picker: failCallPicker{}})
}

func (*failCallBalancer) UpdateSubConnState(balancer.SubConn, balancer.SubConnState) {}
func (*failCallBalancer) ExitIdle()                                                  {}
func (*failCallBalancer) Close()                                                     {}

// failCallPicker fails every call with the error the pool attached to it.
// A picker error that carries a gRPC status ends the call with that status
// whatever its WaitForReady, and is not retried (grpc-go calls it a drop);
// the pool's errors carry one (PoolError.GRPCStatus).
type failCallPicker struct{}

func (failCallPicker) Pick(info balancer.PickInfo) (balancer.PickResult, error) {
	fc, ok := info.Ctx.Value(failedCallKey{}).(*failedCall)
	if !ok {
		// Not a call the pool sent: nothing else uses the channel.
		return balancer.PickResult{}, status.Error(codes.Unavailable, "shoalgrpc: failure channel used for a call the pool did not fail")
	}
	fc.done()
	return balancer.PickResult{}, fc.err
}
