package embedded

import (
	"bufio"
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strconv"
	"time"
)

// LineConn is a client connection to a LineServer.
type LineConn struct {
	conn    *tls.Conn
	r       *bufio.Reader
	request []byte
	err     error // the first error of Do; the connection is unusable after it
}

// DialLine connects to the line server at addr and completes the TLS
// handshake, both bounded by ctx. Every request on the connection asks for
// work of simulated server time.
func DialLine(ctx context.Context, addr string, cfg *tls.Config, work time.Duration) (*LineConn, error) {
	d := tls.Dialer{Config: cfg}
	c, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		return nil, err
	}
	request := strconv.AppendInt(nil, work.Microseconds(), 10)
	return &LineConn{
		conn:    c.(*tls.Conn),
		r:       bufio.NewReaderSize(c, maxLine),
		request: append(request, '\n'),
	}, nil
}

// errBadReply reports a reply other than "ok".
var errBadReply = errors.New("line server: unexpected reply")

// Do sends one request and reads its reply. A deadline on ctx bounds it.
func (c *LineConn) Do(ctx context.Context) error {
	if d, ok := ctx.Deadline(); ok {
		c.conn.SetDeadline(d)
	}
	if _, err := c.conn.Write(c.request); err != nil {
		c.err = fmt.Errorf("line server: write: %w", err)
		return c.err
	}
	line, err := c.r.ReadSlice('\n')
	if err != nil {
		c.err = fmt.Errorf("line server: read: %w", err)
		return c.err
	}
	if string(line) != "ok\n" {
		c.err = errBadReply
		return c.err
	}
	return nil
}

// Err returns the error that made the connection unusable, if any.
func (c *LineConn) Err() error { return c.err }

// Close closes the connection without waiting in TIME_WAIT (SO_LINGER 0),
// so that a benchmark which opens thousands of connections does not run the
// machine out of ephemeral ports.
func (c *LineConn) Close() error {
	if tc, ok := c.conn.NetConn().(*net.TCPConn); ok {
		tc.SetLinger(0)
	}
	return c.conn.Close()
}
