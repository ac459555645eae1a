//go:build unix

package peek

import (
	"crypto/tls"
	"errors"
	"net"
	"syscall"
)

// Peeker checks one connection. Its raw connection and callback are made
// once, in Init, so a Peek allocates nothing. Not safe for concurrent use
// of one Peeker; a pool checks a connection only while nobody else holds
// it. A read of the connection that someone left blocked is fine, though
// (pgconn's background reader can sit in Read on an idle connection).
type Peeker struct {
	raw   syscall.RawConn // nil when the connection has no file descriptor
	fn    func(fd uintptr)
	res   Result
	isTLS bool
	buf   [1]byte
}

// Init prepares p for nc. A *tls.Conn is looked through to the connection
// under it: what Peek then sees are encrypted records (see TLS).
func (p *Peeker) Init(nc net.Conn) {
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

func (p *Peeker) check(fd uintptr) {
	n, _, err := syscall.Recvfrom(int(fd), p.buf[:], syscall.MSG_PEEK|syscall.MSG_DONTWAIT)
	switch {
	case errors.Is(err, syscall.EAGAIN) || errors.Is(err, syscall.EWOULDBLOCK) || errors.Is(err, syscall.EINTR):
		p.res = Quiet
	case err != nil || n == 0:
		p.res = Closed
	default:
		p.res = Data
	}
}

// TLS reports whether the connection given to Init was a *tls.Conn: its
// bytes are TLS records, which say nothing about the protocol inside.
func (p *Peeker) TLS() bool { return p.isTLS }

// Peek reports what is waiting on the connection, and the first byte when
// the result is Data.
func (p *Peeker) Peek() (Result, byte) {
	if p.raw == nil {
		return Unknown, 0
	}
	// Control, not Read: Read would first take the descriptor's read lock,
	// and wait for it, for ever, while another goroutine sits in a blocking
	// Read of an idle connection (pgconn's background reader does, after
	// a slow write). MSG_DONTWAIT keeps the recv itself from waiting.
	if err := p.raw.Control(p.fn); err != nil {
		return Closed, 0 // the descriptor is closed already
	}
	return p.res, p.buf[0]
}
