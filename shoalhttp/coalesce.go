package shoalhttp

import (
	"crypto/tls"
	"net"
	"runtime"
	"sync"
	"sync/atomic"
	"time"
)

// maxCoalesced bounds the bytes a coalescing connection holds for its
// writer goroutine. A writer that would pass it waits, so a peer that stops
// reading holds back the requests, as a full socket buffer would.
const maxCoalesced = 256 << 10

// forceCloseAfter is how long Close lets a TLS close_notify take before it
// closes the socket under it (x/net does the same for a *tls.Conn).
const forceCloseAfter = 250 * time.Millisecond

// coalescingConn batches the writes of an HTTP/2 connection into fewer
// socket writes.
//
// x/net writes each request's HEADERS frame and flushes it on its own,
// under the connection's write lock: N requests sent together cost N write
// system calls (and N TLS records), and each waits for the write before it.
// While busy says other requests are in flight on the connection, a write
// here is queued instead and sent by a writer goroutine, together with
// whatever other writes queue while it is in the kernel. Otherwise there
// is little to batch with, and the caller writes itself.
//
// x/net makes one write at a time (under its write lock), so Write is never
// called concurrently; order is kept because a caller writes itself only
// when nothing is queued. A failed write fails every later one and closes
// the connection, so that x/net's reader fails the requests in flight;
// while HTTP/2 is being set up it only bounds the reads (h2refusal.go).
type coalescingConn struct {
	net.Conn
	busy func() bool // reports whether other requests are in flight

	mu       sync.Mutex
	room     sync.Cond // signalled when queued bytes are taken
	queued   []byte
	spare    []byte
	flushing bool // a writer goroutine owns the socket's writes
	err      error

	// reading counts the Reads under way; readerGone is closed by the
	// first Close made while none is (see Read).
	reading    atomic.Int32
	readerGone chan struct{}
	readerOnce sync.Once

	// onRead, when set, sees every byte read, in order (watchReads).
	onRead func([]byte)

	// holdOnFail keeps the socket open after a write error while HTTP/2
	// is being set up on it, and readErr (guarded by mu) keeps the first
	// read error meanwhile (see refusalOr).
	holdOnFail atomic.Bool
	readErr    error
}

// coalescingTLSConn is a coalescingConn over TLS. x/net reads the TLS
// state from the connection it is given; a plain connection must not offer
// one.
type coalescingTLSConn struct {
	*coalescingConn
	tls *tls.Conn
}

// ConnectionState returns the TLS connection's state.
func (c *coalescingTLSConn) ConnectionState() tls.ConnectionState { return c.tls.ConnectionState() }

// coalesce wraps nc; busy tells whether other requests are in flight on it.
func coalesce(nc net.Conn, busy func() bool) net.Conn {
	c := &coalescingConn{Conn: nc, busy: busy, readerGone: make(chan struct{})}
	c.room.L = &c.mu
	if tc, ok := nc.(*tls.Conn); ok {
		return &coalescingTLSConn{coalescingConn: c, tls: tc}
	}
	return c
}

// coalesced returns the coalescingConn under nc, a connection from
// coalesce.
func coalesced(nc net.Conn) *coalescingConn {
	switch c := nc.(type) {
	case *coalescingConn:
		return c
	case *coalescingTLSConn:
		return c.coalescingConn
	}
	panic("shoalhttp: a connection coalesce did not make")
}

// readLoopGone returns a channel closed once x/net's read loop on nc, a
// connection from coalesce, has closed it on its way out (see Read).
func readLoopGone(nc net.Conn) <-chan struct{} { return coalesced(nc).readerGone }

// watchReads has f see every byte read from nc, a connection from
// coalesce; it must be called before the first Read.
func watchReads(nc net.Conn, f func([]byte)) { coalesced(nc).onRead = f }

// Read reads from the connection, counting the reads under way. x/net's
// read loop is the only reader, and the last thing it does is Close the
// connection, after its last Read has failed: a Close made while no Read
// is under way marks the loop's end (or, rarely, one made between two
// reads, which only ends the wait in h2Conn.close early). A Close that
// fails a blocked Read, as h2Conn.close's does, is not the loop's, nor is
// one made from onRead (stopNewStreams): a Read lasts until its bytes have
// been seen.
func (c *coalescingConn) Read(p []byte) (int, error) {
	c.reading.Add(1)
	n, err := c.Conn.Read(p)
	if n > 0 && c.onRead != nil {
		c.onRead(p[:n])
	}
	if err != nil && c.holdOnFail.Load() {
		c.mu.Lock()
		if c.readErr == nil {
			c.readErr = err
		}
		c.mu.Unlock()
	}
	c.reading.Add(-1)
	return n, err
}

// Write sends p, or queues it for the writer goroutine while busy says so
// or the writer goroutine is under way, and while HTTP/2 is being set up
// (holdOnFail): a failed write then fails the next one, as a queued
// write's error does, rather than x/net's start, which would close the
// connection before its read loop had read what the server sent (see
// refusalOr).
//
// Keep this frame small and the queueing in queue: x/net writes each
// request from a goroutine of its own, whose stack starts small, and a
// larger frame here grew that stack on every request (BENCHMARKS.md).
func (c *coalescingConn) Write(p []byte) (int, error) {
	c.mu.Lock()
	if c.err != nil || c.flushing || c.busy() || c.holdOnFail.Load() {
		return c.queue(p)
	}
	c.mu.Unlock()
	n, err := c.Conn.Write(p)
	if err != nil {
		c.fail(err)
	}
	return n, err
}

// queue adds p to what the writer goroutine sends, starting it if it is
// not running, and waits while the queue is full. c.mu is held on entry
// and released on return.
//
//go:noinline
func (c *coalescingConn) queue(p []byte) (int, error) {
	for c.err == nil && len(c.queued) > 0 && len(c.queued)+len(p) > maxCoalesced {
		c.room.Wait()
	}
	if c.err != nil {
		err := c.err
		c.mu.Unlock()
		return 0, err
	}
	c.queued = append(c.queued, p...)
	if !c.flushing {
		c.flushing = true
		go c.flush()
	}
	c.mu.Unlock()
	return len(p), nil
}

// flush writes what is queued, in as few writes as the queue allows, until
// nothing is left. It first yields its processor, so that the requests
// whose writers are runnable queue their frames before the first write: at
// 32 workers on the in-process TLS server that took a write system call
// from 1.4 frames to about 5.
func (c *coalescingConn) flush() {
	runtime.Gosched()
	c.mu.Lock()
	for len(c.queued) > 0 && c.err == nil {
		buf := c.queued
		c.queued = c.spare[:0]
		c.room.Broadcast()
		c.mu.Unlock()
		_, err := c.Conn.Write(buf)
		if err != nil {
			c.fail(err)
		}
		c.mu.Lock()
		c.spare = buf
	}
	c.queued = c.queued[:0]
	c.flushing = false
	c.room.Broadcast()
	c.mu.Unlock()
}

// fail closes the connection after a write error, then records the error,
// so that whoever sees the error finds the connection closed. While HTTP/2
// is being set up it only bounds the reads instead (see refusalOr): the
// write may have failed on a server that closed after an alert, which the
// read loop is still to read.
func (c *coalescingConn) fail(err error) {
	if c.holdOnFail.Load() {
		_ = c.Conn.SetReadDeadline(time.Now().Add(alertWait))
	} else {
		c.closeConn()
	}
	c.mu.Lock()
	if c.err == nil {
		c.err = err
	}
	c.room.Broadcast()
	c.mu.Unlock()
}

// Close closes the connection and waits for the writer goroutine to end.
// Writes still queued are dropped: x/net closes a connection only when it
// is done with it, or to fail what is in flight. A TLS close_notify that
// cannot be sent within forceCloseAfter is cut short by closing the socket
// under it, which also ends a write the writer goroutine is blocked in.
func (c *coalescingConn) Close() error {
	byReader := c.reading.Load() == 0
	c.mu.Lock()
	if c.err == nil {
		c.err = net.ErrClosed
	}
	c.room.Broadcast()
	c.mu.Unlock()
	err := c.closeConn()
	c.mu.Lock()
	for c.flushing {
		c.room.Wait()
	}
	c.mu.Unlock()
	if byReader {
		c.readerOnce.Do(func() { close(c.readerGone) })
	}
	return err
}

// closeConn closes the wrapped connection, cutting a TLS close_notify
// short after forceCloseAfter.
func (c *coalescingConn) closeConn() error {
	if tc, ok := c.Conn.(*tls.Conn); ok {
		if raw := tc.NetConn(); raw != nil {
			t := time.AfterFunc(forceCloseAfter, func() { raw.Close() })
			defer t.Stop()
		}
	}
	return c.Conn.Close()
}
