package shoalpgx

import (
	"context"
	"errors"
	"net"
	"syscall"
)

// The reader's writes. Each time the reader has read every answer that
// came, it writes out what callers queued meanwhile (flushLocked). It must
// never wait on that write: a server blocked on writing answers the reader
// no longer takes would not read either, and both would wait for ever. So
// on a plain socket the reader makes one write that never waits, which on
// loopback or a quiet network takes everything, and leaves what the socket
// did not take to a goroutine that may wait (writeInBackground); on any
// other connection (TLS, a DialFunc's own net.Conn) that goroutine makes
// the whole write.

// flushLocked writes out what send left queued, unless the server still has
// pipeCorkAt requests in hand; the reader calls it each time it has read
// every answer that came (flushBeforeWait). c.mu must be held; it is held
// again on return, having been let go during a write.
func (c *pipeConn) flushLocked() {
	if len(c.queue) == 0 || c.writing || c.err != nil || len(c.pending)-len(c.queue) >= pipeCorkAt {
		return
	}
	c.writing = true
	if c.raw == nil {
		go c.writeInBackground()
		return
	}
	for len(c.queue) > 0 && c.err == nil {
		out := c.queue
		c.queue = c.spare[:0]
		c.mu.Unlock()
		c.pace.written(out)
		b := c.wbuf[:0]
		for _, q := range out {
			b = append(b, q.buf...)
		}
		n, err := writeNoWait(c.raw, b)
		c.mu.Lock()
		clear(out)
		c.spare = out
		if err != nil || n < len(b) {
			// The socket is full, or failed: the background writer
			// writes the rest, or meets the error and fails the
			// connection as any writer does.
			c.rest = append([]byte(nil), b[n:]...)
			go c.writeInBackground()
			return
		}
		if cap(b) <= 64<<10 {
			c.wbuf = b
		}
	}
	c.writing = false
}

// writeInBackground is writeLocked on a goroutine that no caller waits on,
// so that no caller's context cuts its writes: the callers whose requests
// it carries return at their deadlines without it (pipePool.await), and a
// write that blocks goes on once the server reads again.
func (c *pipeConn) writeInBackground() {
	c.mu.Lock()
	c.writeLocked(context.Background())
}

// writeNoWait writes what the socket takes of b now, in one system call,
// and returns how much that was: 0 with no error when the socket's buffer
// is full.
func writeNoWait(raw syscall.RawConn, b []byte) (int, error) {
	var n int
	var werr error
	err := raw.Write(func(fd uintptr) bool {
		for {
			n, werr = syscall.Write(int(fd), b)
			if werr != syscall.EINTR {
				return true // done, whatever came of it: never wait here
			}
		}
	})
	if n < 0 {
		n = 0
	}
	if errors.Is(werr, syscall.EAGAIN) {
		werr = nil
	}
	if err == nil {
		err = werr
	}
	return n, err
}

// plainSocket returns the raw connection of nc when it is the pool's
// cancelGate over a TCP or Unix socket, and nil otherwise: only there is a
// write straight to the socket the same as nc.Write. The gate lets a write
// through at once unless a cancel request is in flight, and a shared
// connection sends none, so one with none now never will.
func plainSocket(nc net.Conn) syscall.RawConn {
	g, ok := nc.(*cancelGate)
	if !ok || g.c != nil && (g.c.pending.Load() || g.c.cut.Load()) {
		return nil
	}
	var sc syscall.Conn
	switch s := g.Conn.(type) {
	case *net.TCPConn:
		sc = s
	case *net.UnixConn:
		sc = s
	default:
		return nil
	}
	raw, err := sc.SyscallConn()
	if err != nil {
		return nil
	}
	return raw
}
