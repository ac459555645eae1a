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
// every answer that came (flushBeforeWait), readLoop as it stops reading,
// and the cancelling goroutine as it lets the queue go (endCancelling).
// c.mu must be held; it is held again on return, having been let go during
// a write.
func (c *pipeConn) flushLocked() {
	if len(c.queue) == 0 || c.writing || c.cancelling || c.brokenLocked() != nil || len(c.pending)-len(c.queue) >= pipeCorkAt {
		return
	}
	c.writing = true
	if c.raw == nil {
		go c.writeInBackground()
		return
	}
	for len(c.queue) > 0 && c.err == nil && !c.cancelling {
		out := c.queue
		c.queue = c.spare[:0]
		c.mu.Unlock()
		c.pace.written(out)
		b := c.joined(out)
		n, err := c.raw.write(b)
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

// joined returns the messages of out in one slice, the writer's buffer,
// which only the writer touches: a request's own buffer may be reused by
// the next statement as soon as the server has answered, which can be
// before the write that carried it has returned (pipeline_recycle.go).
// A buffer too large to be reused is written as it is, saving the copy.
func (c *pipeConn) joined(out []*pipeReq) []byte {
	if len(out) == 1 && cap(out[0].buf) > keptBuf {
		return out[0].buf
	}
	b := c.wbuf[:0]
	for _, q := range out {
		b = append(b, q.buf...)
	}
	if cap(b) <= 64<<10 {
		c.wbuf = b // kept for the next write, unless a rare batch made it large
	}
	return b
}

// writeAll writes b for a caller: first in a write that never waits, where
// the socket allows one, which leaves ctx out of it; what that leaves, in a
// write that waits and that ctx's end cuts (cutWriteAt).
func (c *pipeConn) writeAll(ctx context.Context, b []byte) (int, error) {
	n := 0
	if c.raw != nil {
		var err error
		if n, err = c.raw.write(b); err != nil || n == len(b) {
			return n, err
		}
	}
	uncut := cutWriteAt(ctx, c.nc)
	m, err := c.nc.Write(b[n:])
	uncut()
	return n + m, err
}

// rawWriter writes to a socket in one system call that never waits. Its
// fields carry one write's bytes and outcome through the function the
// socket calls, made once, so that a write allocates nothing; one writer
// at a time (pipeConn.writing) uses it.
type rawWriter struct {
	raw syscall.RawConn
	b   []byte
	n   int
	err error
	fn  func(fd uintptr) bool
}

func newRawWriter(raw syscall.RawConn) *rawWriter {
	w := &rawWriter{raw: raw}
	w.fn = func(fd uintptr) bool {
		for {
			w.n, w.err = syscall.Write(int(fd), w.b)
			if w.err != syscall.EINTR {
				return true // done, whatever came of it: never wait here
			}
		}
	}
	return w
}

// write writes what the socket takes of b now and returns how much that
// was: 0 with no error when the socket's buffer is full.
func (w *rawWriter) write(b []byte) (int, error) {
	w.b, w.n, w.err = b, 0, nil
	err := w.raw.Write(w.fn)
	n, werr := max(w.n, 0), w.err
	w.b, w.err = nil, nil
	if err != nil {
		// The socket refused the write without calling fn (it is
		// closed): nothing left, whatever the last write wrote.
		return 0, err
	}
	if errors.Is(werr, syscall.EAGAIN) {
		werr = nil
	}
	return n, werr
}

// plainSocket returns a rawWriter for nc when it is the pool's
// cancelGate over a TCP or Unix socket, and nil otherwise: only there is a
// write straight to the socket the same as nc.Write. The gate lets a write
// through at once unless a cancel request is in flight, and a shared
// connection sends none, so one with none now never will.
func plainSocket(nc net.Conn) *rawWriter {
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
	return newRawWriter(raw)
}
