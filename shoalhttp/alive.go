package shoalhttp

import (
	"errors"
	"net"
	"time"

	"github.com/shoalpool/shoal/internal/peek"
)

// idleAlive reports whether an idle connection still looks usable: the
// server has not closed it and has sent nothing unasked (an HTTP/1.1 server
// speaks only to answer, so stray bytes mean a "408 Request Timeout" or
// garbage). Where the platform cannot peek, the connection is trusted and a
// dead one is caught by the retry rule.
func (c *h1Conn) idleAlive() bool {
	if c.br.Buffered() > 0 {
		return false
	}
	switch res, _ := c.peek.Peek(); res {
	case peek.Closed:
		return false
	case peek.Data:
		return c.peek.TLS() && c.tlsIdleAlive()
	}
	return true
}

// tlsIdleReadWait bounds the read that looks at what a TLS server sent to
// an idle connection; the bytes are already there, so it ends at once
// unless they were only a post-handshake message.
const tlsIdleReadWait = 2 * time.Millisecond

// tlsIdleAlive reads what a TLS server sent to an idle connection, which
// only decryption can tell apart: a session ticket (TLS handles it, and
// the connection is fine) or the close_notify alert a server sends before
// it closes an idle keep-alive connection (the next request would be
// written into a closed connection, and a POST could not be retried).
// Application data, EOF or any other error means the connection is done.
func (c *h1Conn) tlsIdleAlive() bool {
	c.nc.SetReadDeadline(time.Now().Add(tlsIdleReadWait))
	var b [1]byte
	n, err := c.nc.Read(b[:])
	c.nc.SetReadDeadline(time.Time{})
	var ne net.Error
	return n == 0 && errors.As(err, &ne) && ne.Timeout()
}
