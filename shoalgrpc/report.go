package shoalgrpc

import (
	"context"
	"encoding/json"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/balancer"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/serviceconfig"
)

// grpc-go keeps the reason a connection failed (a refused connect, a TLS
// handshake error) inside its balancer, which hands it to the picker it
// installs for TRANSIENT_FAILURE; grpc.ClientConn shows it only in the
// error of a call that fails fast on that channel. A call would reach the
// tracers and interceptors given as dial options, and the pool's
// connections keep the user's own service config (and with it their load
// balancing policy), so the pool cannot put a balancer of its own on them.
// When a connection failed and the pool's context dialer did not see why,
// the pool makes one more attempt on a client of its own whose balancer is
// pick_first wrapped to pass the picker's error on: the same error a
// fail-fast call would have got, with no call made.

// reportBalancerName names that balancer.
const reportBalancerName = "shoalgrpc_report_connect_error"

func init() { balancer.Register(reportBuilder{}) }

// diagnoseTimeout bounds the second attempt, within what is left of the
// dial's own timeout; a client whose resolver supplies a service config of
// its own never uses the reporting balancer, and this is how long it waits
// for a report that will not come.
const diagnoseTimeout = 5 * time.Second

// reports holds, by id, where each reporting client's balancer sends what
// it learnt: a balancer is built by grpc-go from a service config, and the
// id in its config is how it finds the attempt that made it.
var (
	reports   sync.Map // uint64 -> chan error
	reportIDs atomic.Uint64
)

// diagnose connects once more to learn why a connection failed. It returns
// grpc-go's error for the failure; or nil and whether the second attempt
// connected (the failure did not last) rather than gave no answer in time.
func (p *Pool) diagnose(ctx context.Context) (cause error, connected bool) {
	ctx, cancel := context.WithTimeout(ctx, diagnoseTimeout)
	defer cancel()
	id := reportIDs.Add(1)
	ch := make(chan error, 1)
	reports.Store(id, ch)
	defer reports.Delete(id)

	dc := &conn{netDial: p.netDial}
	sc := fmt.Sprintf(`{"loadBalancingConfig":[{%q:{"id":%d}}]}`, reportBalancerName, id)
	opts := append(p.connOpts(dc), grpc.WithDefaultServiceConfig(sc))
	cc, err := grpc.NewClient(p.target, opts...)
	if err != nil {
		return err, false
	}
	defer cc.Close()
	cc.Connect()
	select {
	case err := <-ch:
		return err, err == nil
	case <-ctx.Done():
		return dc.dialErr(), false
	}
}

// reportConfig is the reporting balancer's config: the id of the attempt.
type reportConfig struct {
	serviceconfig.LoadBalancingConfig
	ID uint64 `json:"id"`
}

// reportBuilder builds the reporting balancer.
type reportBuilder struct{}

func (reportBuilder) Name() string { return reportBalancerName }

func (reportBuilder) ParseConfig(js json.RawMessage) (serviceconfig.LoadBalancingConfig, error) {
	var cfg reportConfig
	if err := json.Unmarshal(js, &cfg); err != nil {
		return nil, fmt.Errorf("shoalgrpc: %s config: %w", reportBalancerName, err)
	}
	return &cfg, nil
}

func (reportBuilder) Build(cc balancer.ClientConn, opts balancer.BuildOptions) balancer.Balancer {
	b := &reportBalancer{}
	b.child = balancer.Get("pick_first").Build(&reportingClientConn{ClientConn: cc, b: b}, opts)
	return b
}

// reportBalancer is pick_first, passing on the first outcome it reports:
// the picker's error at TRANSIENT_FAILURE, or nil at READY.
type reportBalancer struct {
	child balancer.Balancer
	sink  atomic.Pointer[chan error]
}

func (b *reportBalancer) UpdateClientConnState(s balancer.ClientConnState) error {
	if cfg, ok := s.BalancerConfig.(*reportConfig); ok {
		if ch, ok := reports.Load(cfg.ID); ok {
			c := ch.(chan error)
			b.sink.Store(&c)
		}
	}
	s.BalancerConfig = nil // pick_first's own defaults
	return b.child.UpdateClientConnState(s)
}

func (b *reportBalancer) ResolverError(err error) { b.child.ResolverError(err) }

// UpdateSubConnState is never called: pick_first gives every SubConn it
// makes a StateListener of its own.
func (b *reportBalancer) UpdateSubConnState(balancer.SubConn, balancer.SubConnState) {}

func (b *reportBalancer) ExitIdle() { b.child.ExitIdle() }
func (b *reportBalancer) Close()    { b.child.Close() }

// send passes an outcome on, once; later ones are dropped.
func (b *reportBalancer) send(err error) {
	if ch := b.sink.Load(); ch != nil {
		select {
		case *ch <- err:
		default:
		}
	}
}

// reportingClientConn reads what pick_first reports on its way to grpc-go.
type reportingClientConn struct {
	balancer.ClientConn
	b *reportBalancer
}

func (c *reportingClientConn) UpdateState(s balancer.State) {
	switch s.ConnectivityState {
	case connectivity.TransientFailure:
		// What a fail-fast call would be failed with.
		_, err := s.Picker.Pick(balancer.PickInfo{Ctx: context.Background(), FullMethodName: "/"})
		c.b.send(err)
	case connectivity.Ready:
		c.b.send(nil)
	}
	c.ClientConn.UpdateState(s)
}
