package shoalhttp

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"strings"

	"github.com/shoalpool/shoal"
	"golang.org/x/net/http/httpguts"
)

// wantsHTTP1 reports whether req asks to switch to WebSocket, which only
// HTTP/1.1 can do: it goes on an HTTP/1.1 connection even to an origin
// that speaks HTTP/2, as with net/http.
func wantsHTTP1(req *http.Request) bool {
	return httpguts.HeaderValuesContainsToken(req.Header["Connection"], "upgrade") &&
		strings.EqualFold(req.Header.Get("Upgrade"), "websocket")
}

// isProtocolSwitch reports whether h (a 101 response's header) names the
// protocol the connection switches to.
func isProtocolSwitch(h http.Header) bool {
	return h.Get("Upgrade") != "" && httpguts.HeaderValuesContainsToken(h["Connection"], "Upgrade")
}

// upgrade ends a request answered with 101 Switching Protocols. The
// connection leaves the pool for good (its place in MaxConns is free
// again) and becomes the response's Body, an io.ReadWriteCloser, as with
// net/http: from now on it is the caller's, and its Close closes it. The
// request's context no longer applies to it. A 101 that names no protocol
// is returned with an empty body, the connection closed.
func (c *h1Conn) upgrade(ctx context.Context, lease shoal.Lease[*h1Conn], stop func() bool, resp *http.Response) (*http.Response, error) {
	if !isProtocolSwitch(resp.Header) {
		c.end(lease, stop, false)
		resp.Close = true
		return resp, nil
	}
	if dw := c.dw; dw != nil {
		// The request had a body still being written: the connection
		// switches once it is all sent, unless the context ends first,
		// which stops the writer (closing the caller's body) and the
		// connection with it.
		select {
		case <-dw.done:
		case <-ctx.Done():
			c.end(lease, stop, false)
			return nil, fmt.Errorf("request canceled: %w", context.Cause(ctx))
		}
		if dw.err == errBodyPanicked {
			c.end(lease, stop, false)
			panic(dw.panicVal)
		}
		if dw.err != nil {
			c.end(lease, stop, false)
			return nil, &connError{op: "write request", err: dw.err, sent: true, received: true}
		}
	}
	if stop != nil && !stop() {
		// The context ended as the answer came and put the deadline in
		// the past: the connection is of no use to anyone.
		lease.Discard()
		return nil, fmt.Errorf("request canceled: %w", context.Cause(ctx))
	}
	c.trace = nil
	nc, err := lease.Hijack()
	if err != nil {
		c.nc.Close()
		return nil, err
	}
	resp.Body = &upgradedBody{br: c.br, nc: nc.nc}
	return resp, nil
}

// upgradedBody is the connection of a 101 response: reads take what the
// response's reader had buffered first (bytes the server sent right after
// its answer), then the socket; writes go to the socket.
type upgradedBody struct {
	br *bufio.Reader // nil once drained
	nc net.Conn
}

func (b *upgradedBody) Read(p []byte) (int, error) {
	if b.br != nil {
		if n := b.br.Buffered(); n > 0 {
			return b.br.Read(p[:min(len(p), n)])
		}
		b.br = nil // it reads through the socket: done with it
	}
	return b.nc.Read(p)
}

func (b *upgradedBody) Write(p []byte) (int, error) { return b.nc.Write(p) }

func (b *upgradedBody) Close() error { return b.nc.Close() }

// CloseWrite shuts down the writing side, when the connection can (TCP
// and TLS connections can).
func (b *upgradedBody) CloseWrite() error {
	if cw, ok := b.nc.(interface{ CloseWrite() error }); ok {
		return cw.CloseWrite()
	}
	return fmt.Errorf("CloseWrite: %w", errors.ErrUnsupported)
}
