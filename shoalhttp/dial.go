package shoalhttp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
)

// ALPN protocol lists. An https origin whose protocol is not known yet
// offers both; once the first connection has told which one the server
// speaks, later connections offer only that one.
var (
	alpnBoth  = []string{"h2", "http/1.1"}
	alpnHTTP1 = []string{"http/1.1"}
)

// dialer opens TCP (and TLS) connections to one origin.
type dialer struct {
	key  originKey
	opts *Options
	tls  *tls.Config // nil for plain http; NextProtos is set per dial
}

func newDialer(key originKey, opts *Options) *dialer {
	d := &dialer{key: key, opts: opts}
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
// returns the connection and the negotiated protocol ("" when none).
func (d *dialer) dial(ctx context.Context, alpn []string) (net.Conn, string, error) {
	tcp, err := d.dialTCP(ctx)
	if err != nil {
		return nil, "", err
	}
	if d.tls == nil {
		return tcp, "", nil
	}
	cfg := d.tls.Clone()
	cfg.NextProtos = alpn
	tc := tls.Client(tcp, cfg)
	hctx, cancel := context.WithTimeout(ctx, d.opts.TLSHandshakeTimeout)
	defer cancel()
	if err := tc.HandshakeContext(hctx); err != nil {
		tcp.Close()
		if errors.Is(err, context.DeadlineExceeded) && ctx.Err() == nil {
			return nil, "", fmt.Errorf("TLS handshake: no answer within TLSHandshakeTimeout (%s): %w", d.opts.TLSHandshakeTimeout, err)
		}
		return nil, "", fmt.Errorf("TLS handshake: %w", err)
	}
	return tc, tc.ConnectionState().NegotiatedProtocol, nil
}

func (d *dialer) dialTCP(ctx context.Context) (net.Conn, error) {
	if d.opts.DialContext != nil {
		dctx, cancel := context.WithTimeout(ctx, d.opts.DialTimeout)
		defer cancel()
		return d.opts.DialContext(dctx, "tcp", d.key.addr())
	}
	nd := net.Dialer{Timeout: d.opts.DialTimeout, KeepAlive: defaultKeepAlive}
	return nd.DialContext(ctx, "tcp", d.key.addr())
}
