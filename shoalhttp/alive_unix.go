//go:build unix

package shoalhttp

import (
	"crypto/tls"
	"errors"
	"syscall"
)

// idleAlive reports whether an idle connection still looks usable: the
// server has not closed it and has sent nothing unasked (an HTTP/1.1 server
// speaks only to answer, so stray bytes mean a "408 Request Timeout" or
// garbage). It peeks at the socket without blocking: one system call, no
// goroutine per idle connection.
func (c *h1Conn) idleAlive() bool {
	if c.br.Buffered() > 0 {
		return false
	}
	nc := c.nc
	isTLS := false
	if tc, ok := nc.(*tls.Conn); ok {
		nc, isTLS = tc.NetConn(), true
	}
	sc, ok := nc.(syscall.Conn)
	if !ok {
		return true
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return false
	}
	alive := true
	var buf [1]byte
	err = raw.Read(func(fd uintptr) bool {
		n, _, rerr := syscall.Recvfrom(int(fd), buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
		switch {
		case errors.Is(rerr, syscall.EAGAIN) || errors.Is(rerr, syscall.EWOULDBLOCK) || errors.Is(rerr, syscall.EINTR):
			// Nothing to read: open and quiet.
		case rerr != nil || n == 0:
			alive = false // reset, or closed by the server (EOF)
		default:
			// Over TLS, bytes may be a post-handshake message such as
			// a session ticket; only plain text is known to be wrong.
			alive = isTLS
		}
		return true // never wait for readability
	})
	return err == nil && alive
}
