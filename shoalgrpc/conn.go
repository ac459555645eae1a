package shoalgrpc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"sync/atomic"
	"time"

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
	// dialed is set once the context dialer has been called: grpc-go
	// resolved the target and tried an address.
	dialed atomic.Bool
}

// dial opens a grpc.ClientConn to the pool's target and waits until it is
// READY, or fails when it reaches TRANSIENT_FAILURE or ctx ends first,
// saying why (connectError).
func (p *Pool) dial(ctx context.Context) (*conn, error) {
	c := &conn{netDial: p.netDial}
	cc, err := grpc.NewClient(p.target, p.connOpts(c)...)
	// No "shoalgrpc: " on these: they reach callers inside the core's
	// acquire error, inside a PoolError that names the package once.
	if err != nil {
		p.lastDialFailed.Store(true)
		return nil, p.redact(fmt.Errorf("new client for %s: %w", p.shownTarget, err))
	}
	c.cc = cc
	if err := p.waitReady(ctx, c); err != nil {
		_ = cc.Close()
		p.lastDialFailed.Store(true)
		return nil, p.redact(err)
	}
	p.lastDialFailed.Store(false)
	p.track(c)
	return c, nil
}

// connOpts returns the dial options of a connection, in a slice of its
// own: the caller's, after the pool's context dialer for c when the pool
// reads the server's stream limit (first, so that a context dialer among
// the caller's options wins), and then the pool's innermost interceptors
// (calls.go), last so that they run after the caller's.
func (p *Pool) connOpts(c *conn) []grpc.DialOption {
	opts := make([]grpc.DialOption, 0, len(p.dialOpts)+3)
	if p.discoverLimit {
		opts = append(opts, grpc.WithContextDialer(c.dialContext))
	}
	opts = append(opts, p.dialOpts...)
	return append(opts, grpc.WithChainUnaryInterceptor(innermostUnary), grpc.WithChainStreamInterceptor(innermostStream))
}

// waitReady starts connecting and waits for READY.
func (p *Pool) waitReady(ctx context.Context, c *conn) error {
	start := time.Now()
	c.cc.Connect()
	for {
		state := c.cc.GetState()
		switch state {
		case connectivity.Ready:
			return nil
		case connectivity.TransientFailure, connectivity.Shutdown:
			return p.notReady(ctx, c)
		}
		if !c.cc.WaitForStateChange(ctx, state) {
			if err := c.dialErr(); err != nil {
				// A refused connect, say, and grpc-go's backoff ran
				// past the deadline before it reported TRANSIENT_FAILURE.
				return p.connectError(err)
			}
			reason := fmt.Sprintf("not ready after %s (state %s)", time.Since(start).Round(time.Millisecond), state)
			return &connectError{target: p.shownTarget, reason: reason, shown: ctx.Err(), err: ctx.Err()}
		}
	}
}

// notReady finds out why c reached TRANSIENT_FAILURE without becoming
// READY: from the pool's context dialer when the TCP connect itself
// failed; from the DNS when grpc-go's resolver found no address for a
// name; else from grpc-go, by a second attempt (see diagnose).
func (p *Pool) notReady(ctx context.Context, c *conn) error {
	if err := c.dialErr(); err != nil {
		return p.connectError(err)
	}
	if !c.dialed.Load() {
		if err := lookupFailure(ctx, p.canonicalTarget); err != nil {
			return p.connectError(err)
		}
	}
	cause, connected := p.diagnose(ctx)
	if cause != nil {
		return p.connectError(cause)
	}
	reason := "no cause known, and a second attempt gave none in time"
	if connected {
		reason = "no cause known, and a second attempt connected"
	}
	return &connectError{target: p.shownTarget, reason: reason, shown: errNotReady, err: errNotReady}
}

// connectError describes a failed connection, marked permanent when no
// retry can mend it.
func (p *Pool) connectError(err error) error {
	reason, shown, permanent := classify(err)
	var out error = &connectError{target: p.shownTarget, reason: reason, shown: shown, err: err}
	if permanent {
		out = markPermanent(out)
	}
	return out
}

// errNotReady says that a new connection failed its first attempt, when a
// second one told nothing more.
var errNotReady = errors.New("connection entered TRANSIENT_FAILURE before it was ready")

// dialContext is the context dialer the pool installs: a plain TCP (or
// unix) dial whose connection reports the server's stream limit to c.
func (c *conn) dialContext(ctx context.Context, addr string) (net.Conn, error) {
	network, address := "tcp", addr
	if after, ok := cutUnix(addr); ok {
		network, address = "unix", after
	}
	raw, err := c.netDial(ctx, c, network, address)
	c.dialed.Store(true)
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
