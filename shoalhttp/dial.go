package shoalhttp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"net/http/httptrace"
)

// ALPN protocol lists. An https origin whose protocol is not known yet
// offers both; once the first connection has told which one the server
// speaks, later connections offer only that one.
var (
	alpnBoth  = []string{"h2", "http/1.1"}
	alpnHTTP1 = []string{"http/1.1"}
)

// dialer opens TCP (and TLS) connections to one origin, through its proxy
// when it has one.
type dialer struct {
	key      originKey
	opts     *Options
	tls      *tls.Config // nil for plain http; NextProtos is set per dial
	proxyTLS *tls.Config // for an https proxy: TLS to the proxy itself
}

func newDialer(key originKey, opts *Options) *dialer {
	d := &dialer{key: key, opts: opts}
	if key.proxy.scheme == "https" {
		// The proxy's certificate is checked as the origins' are, with
		// TLSClientConfig's roots, against the proxy's own name.
		d.proxyTLS = &tls.Config{}
		if opts.TLSClientConfig != nil {
			d.proxyTLS = opts.TLSClientConfig.Clone()
		}
		d.proxyTLS.ServerName = key.proxy.host
		d.proxyTLS.NextProtos = alpnHTTP1
	}
	if key.scheme == "https" {
		if opts.TLSClientConfig != nil {
			d.tls = opts.TLSClientConfig.Clone()
		} else {
			d.tls = &tls.Config{}
		}
		if d.tls.ServerName == "" {
			d.tls.ServerName = key.host
		}
	}
	return d
}

// dial connects and, for https, runs the TLS handshake offering alpn. It
// returns the connection and the negotiated protocol ("" when none). With
// a proxy, the connection is to the proxy (over TLS for an https proxy),
// and an https origin's TLS runs inside a CONNECT tunnel through it. An
// error no retry can mend is marked permanent (permanent.go).
func (d *dialer) dial(ctx context.Context, alpn []string) (_ net.Conn, _ string, err error) {
	defer func() { err = markPermanent(err) }()
	nc, err := d.dialTCP(ctx)
	if err != nil {
		if d.key.proxy.isSet() {
			return nil, "", fmt.Errorf("proxy %s: %w", d.key.proxy, err)
		}
		return nil, "", err
	}
	if d.proxyTLS != nil {
		if nc, err = d.handshake(ctx, nc, d.proxyTLS); err != nil {
			return nil, "", fmt.Errorf("proxy %s: %w", d.key.proxy, err)
		}
	}
	if d.tls == nil {
		return nc, "", nil
	}
	if d.key.proxy.isSet() {
		if nc, err = connectTunnel(ctx, nc, d.key.proxy, d.key.addr()); err != nil {
			return nil, "", err
		}
	}
	cfg := d.tls.Clone()
	cfg.NextProtos = alpn
	tc, err := d.handshake(ctx, nc, cfg)
	if err != nil {
		return nil, "", err
	}
	return tc, tc.(*tls.Conn).ConnectionState().NegotiatedProtocol, nil
}

// handshake runs a TLS client handshake on nc within TLSHandshakeTimeout,
// closing nc when it fails. It fires the TLS hooks of a trace in ctx (the
// request's whose wait caused the dial, see dialTraces).
func (d *dialer) handshake(ctx context.Context, nc net.Conn, cfg *tls.Config) (net.Conn, error) {
	trace := httptrace.ContextClientTrace(ctx)
	if trace != nil && trace.TLSHandshakeStart != nil {
		trace.TLSHandshakeStart()
	}
	tc := tls.Client(nc, cfg)
	hctx, cancel := ctx, context.CancelFunc(func() {})
	if d.opts.TLSHandshakeTimeout > 0 {
		hctx, cancel = context.WithTimeout(ctx, d.opts.TLSHandshakeTimeout)
	}
	defer cancel()
	err := tc.HandshakeContext(hctx)
	if trace != nil && trace.TLSHandshakeDone != nil {
		var cs tls.ConnectionState
		if err == nil {
			cs = tc.ConnectionState()
		}
		trace.TLSHandshakeDone(cs, err)
	}
	if err != nil {
		nc.Close()
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, fmt.Errorf("TLS handshake: no answer within TLSHandshakeTimeout (%s): %w", d.opts.TLSHandshakeTimeout, err)
		}
		return nil, fmt.Errorf("TLS handshake: %w", err)
	}
	return tc, nil
}

func (d *dialer) dialTCP(ctx context.Context) (net.Conn, error) {
	if d.opts.DialContext != nil {
		if d.opts.DialTimeout > 0 {
			dctx, cancel := context.WithTimeout(ctx, d.opts.DialTimeout)
			defer cancel()
			ctx = dctx
		}
		return d.opts.DialContext(ctx, "tcp", d.key.dialAddr())
	}
	nd := net.Dialer{Timeout: d.opts.DialTimeout, KeepAlive: defaultKeepAlive}
	return nd.DialContext(ctx, "tcp", d.key.dialAddr())
}
