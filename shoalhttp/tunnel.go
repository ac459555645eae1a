package shoalhttp

import (
	"bufio"
	"context"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// maxConnectResponse bounds the proxy's answer to a CONNECT, head and all,
// so that a proxy sending garbage cannot grow the client's memory.
const maxConnectResponse = 64 << 10

// connectTunnel asks the proxy at the other end of nc for a tunnel to
// target (host:port) and returns the connection to use through it. The
// exchange ends with ctx: the connection's deadline is moved into the past
// to unblock it. nc is closed on failure.
func connectTunnel(ctx context.Context, nc net.Conn, p proxyKey, target string) (net.Conn, error) {
	req := &http.Request{
		Method: http.MethodConnect,
		URL:    &url.URL{Opaque: target},
		Host:   target,
		Header: make(http.Header, 1),
	}
	if p.auth != "" {
		req.Header.Set("Proxy-Authorization", p.auth)
	}
	if dl, ok := ctx.Deadline(); ok {
		nc.SetDeadline(dl)
	}
	stop := context.AfterFunc(ctx, func() { nc.SetDeadline(aLongTimeAgo) })
	br := bufio.NewReader(&io.LimitedReader{R: nc, N: maxConnectResponse})
	resp, err := func() (*http.Response, error) {
		if err := req.Write(nc); err != nil {
			return nil, err
		}
		return http.ReadResponse(br, req)
	}()
	if !stop() || ctx.Err() != nil {
		nc.Close()
		return nil, errProxyConnect(p, target, context.Cause(ctx))
	}
	if err != nil {
		nc.Close()
		return nil, errProxyConnect(p, target, err)
	}
	if resp.StatusCode/100 != 2 {
		nc.Close()
		status := resp.Status
		if status == "" {
			status = http.StatusText(resp.StatusCode)
		}
		return nil, &ProxyConnectError{Proxy: p.String(), Target: target, StatusCode: resp.StatusCode, Status: strings.TrimSpace(status)}
	}
	nc.SetDeadline(time.Time{})
	if br.Buffered() > 0 {
		// The origin spoke first through the tunnel (a TLS server does
		// not, but nothing read may be lost).
		buffered, _ := br.Peek(br.Buffered())
		return &prefixConn{Conn: nc, prefix: append([]byte(nil), buffered...)}, nil
	}
	return nc, nil
}

// prefixConn is a connection whose first bytes were already read from it.
type prefixConn struct {
	net.Conn
	prefix []byte
}

func (c *prefixConn) Read(p []byte) (int, error) {
	if len(c.prefix) > 0 {
		n := copy(p, c.prefix)
		c.prefix = c.prefix[n:]
		return n, nil
	}
	return c.Conn.Read(p)
}
