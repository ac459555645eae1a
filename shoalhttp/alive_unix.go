//go:build unix

package shoalhttp

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
)

// peeker checks an idle connection without blocking: one recv with
// MSG_PEEK|MSG_DONTWAIT, no goroutine per idle connection. Its raw
// connection and callback are made once per connection, so a check
// allocates nothing.
type peeker struct {
	raw   syscall.RawConn // nil when the connection has no file descriptor
	isTLS bool
	fn    func(fd uintptr) bool
	alive bool // result of the last fn call
	buf   [1]byte
}

func (p *peeker) init(nc net.Conn) {
	if tc, ok := nc.(*tls.Conn); ok {
		nc, p.isTLS = tc.NetConn(), true
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return
	}
	p.raw = raw
	p.fn = p.check
}

func (p *peeker) check(fd uintptr) bool {
	n, _, err := syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	switch {
	case errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EINTR):
		p.alive = true // nothing to read: open and quiet
	case err != nil || n == 0:
		p.alive = false // reset, or closed by the server (EOF)
	default:
		// Over TLS, bytes may be a post-handshake message such as a
		// session ticket; only plain text is known to be wrong.
		p.alive = p.isTLS
	}
	return true // never wait for readability
}

// idleAlive reports whether an idle connection still looks usable: the
// server has not closed it and has sent nothing unasked (an HTTP/1.1 server
// speaks only to answer, so stray bytes mean a "408 Request Timeout" or
// garbage).
func (c *h1Conn) idleAlive() bool {
	if c.br.Buffered() > 0 {
		return false
	}
	p := &c.peek
	if p.raw == nil {
		return true
	}
	if err := p.raw.Read(p.fn); err != nil {
		return false
	}
	return p.alive
}
