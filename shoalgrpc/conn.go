package shoalgrpc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/connectivity"
	"google.golang.org/grpc/status"
)

// conn is one pooled grpc.ClientConn and what the pool learnt about it.
type conn struct {
	cc *grpc.ClientConn

	// serverLimit is the stream limit the server advertised on the
	// connection's latest transport: 0 while unknown, maxAdvertised when
	// the server set none. Written by the transport's reader goroutine.
	serverLimit atomic.Int32
	// appliedLimit is the serverLimit last passed to the core pool.
	appliedLimit atomic.Int32

	// netDial opens the raw connection under the pool's context dialer:
	// Pool.netDial, replaced only by tests.
	netDial func(ctx context.Context, c *conn, network, address string) (net.Conn, error)

	// lastDialErr is the latest error from the pool's context dialer, kept
	// to say why a connection never became ready.
	dialMu      sync.Mutex
	lastDialErr error
}

// dial opens a grpc.ClientConn to the pool's target and waits until it is
// READY, or fails when it reaches TRANSIENT_FAILURE or ctx ends first.
func (p *Pool) dial(ctx context.Context) (*conn, error) {
	c := &conn{netDial: p.netDial}
	opts := p.dialOpts
	if p.discoverLimit {
		// First, so that a context dialer among the caller's options wins.
		opts = append([]grpc.DialOption{grpc.WithContextDialer(c.dialContext)}, p.dialOpts...)
	}
	cc, err := grpc.NewClient(p.target, opts...)
	// No "shoalgrpc: " on these: they reach callers inside the core's
	// acquire error, inside a PoolError that names the package once.
	if err != nil {
		p.lastDialFailed.Store(true)
		return nil, p.redact(fmt.Errorf("new client for %s: %w", p.shownTarget, err))
	}
	c.cc = cc
	if err := c.waitReady(ctx); err != nil {
		_ = cc.Close()
		p.lastDialFailed.Store(true)
		return nil, p.redact(fmt.Errorf("connecting to %s: %w", p.shownTarget, err))
	}
	p.lastDialFailed.Store(false)
	p.track(c)
	return c, nil
}

// errNotReady says that a new connection failed its first attempt.
var errNotReady = errors.New("connection entered TRANSIENT_FAILURE before it was ready")

// waitReady starts connecting and waits for READY.
func (c *conn) waitReady(ctx context.Context) error {
	c.cc.Connect()
	for {
		state := c.cc.GetState()
		switch state {
		case connectivity.Ready:
			return nil
		case connectivity.TransientFailure, connectivity.Shutdown:
			if err := c.dialErr(); err != nil {
				return fmt.Errorf("%w: %w", errNotReady, err)
			}
			return errNotReady
		}
		if !c.cc.WaitForStateChange(ctx, state) {
			if err := c.dialErr(); err != nil {
				return fmt.Errorf("waited for READY in state %s: %w (last dial error: %w)", state, ctx.Err(), err)
			}
			return fmt.Errorf("waited for READY in state %s: %w", state, ctx.Err())
		}
	}
}

// dialContext is the context dialer the pool installs: a plain TCP (or
// unix) dial whose connection reports the server's stream limit to c.
func (c *conn) dialContext(ctx context.Context, addr string) (net.Conn, error) {
	network, address := "tcp", addr
	if after, ok := cutUnix(addr); ok {
		network, address = "unix", after
	}
	raw, err := c.netDial(ctx, c, network, address)
	c.dialMu.Lock()
	c.lastDialErr = err
	c.dialMu.Unlock()
	if err != nil {
		return nil, err
	}
	return &settingsConn{Conn: raw, limit: &c.serverLimit}, nil
}

func (c *conn) dialErr() error {
	c.dialMu.Lock()
	defer c.dialMu.Unlock()
	return c.lastDialErr
}

// cutUnix recognises the forms in which grpc-go hands a unix socket address
// to a context dialer: "unix://absolute-path" and "unix:relative-path".
func cutUnix(addr string) (string, bool) {
	if after, ok := strings.CutPrefix(addr, "unix://"); ok {
		return after, true
	}
	return strings.CutPrefix(addr, "unix:")
}

// close closes the connection. Called by the core pool once the
// connection has no call left, or by Pool.Close.
func (p *Pool) closeConn(c *conn) error {
	p.untrack(c)
	err := c.cc.Close()
	if status.Code(err) == codes.Canceled {
		// Already closed by Pool.Close: grpc says "the client connection is
		// closing", which is not a failure here.
		return nil
	}
	return err
}

// netDial is the pool's plain dial.
func netDial(ctx context.Context, _ *conn, network, address string) (net.Conn, error) {
	var d net.Dialer
	return d.DialContext(ctx, network, address)
}
