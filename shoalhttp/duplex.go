package shoalhttp

import (
	"context"
	"errors"
	"net/http"
	"sync"
	"time"

	"github.com/shoalpool/shoal"
)

// maxSerialBody is the largest in-memory request body written before the
// response is read, on the calling goroutine: it fits in the socket
// buffers of both ends, so the write cannot wait on a server that answers
// before it reads, and the goroutine a concurrent write needs would cost
// more than the request. Larger and streaming bodies are written while the
// response is read (see sendDuplex).
const maxSerialBody = 64 << 10

// writesConcurrently reports whether req's body is written on a goroutine
// of its own while the response is read: full duplex, as net/http does, so
// that a server that answers while still reading the body is not stuck
// behind a client still writing it, and a streaming body can go on after
// the response has arrived.
func writesConcurrently(req *http.Request) bool {
	if req.Body == nil || req.Body == http.NoBody {
		return false
	}
	if expectsContinue(req) {
		return true // the writer waits for 100 Continue while the reader reads it
	}
	n, inMemory := inMemoryLen(req.Body)
	return !inMemory || n > maxSerialBody
}

// writerStopWait bounds how long a request that ends its connection waits
// for its body's writer to stop, after interrupting the socket and closing
// the body (see end). Only a body whose Read ignores Close takes that
// long; the writer then ends the lease when it returns.
const writerStopWait = 100 * time.Millisecond

// writeWaitBeforeReuse bounds how long a response that has ended waits
// for its body's writer before it returns without the connection back in
// the pool (net/http waits the same 50ms). A writer still waiting on a
// caller who feeds the body only after the response gives the connection
// back when it ends; one still writing to the socket by then, to a server
// that has answered and stopped reading, is cut off and the connection
// closed, as net/http does, so that nothing holds it for good.
const writeWaitBeforeReuse = 50 * time.Millisecond

// errBodyPanicked stands for the write's error when the caller's body
// panicked; the panic itself is raised again on the caller's goroutine.
var errBodyPanicked = errors.New("request body panicked")

// duplexWrite is the state shared by a request's body writer and the
// reader of its response. The connection goes back to the pool (or is
// closed) by whichever of the two ends last.
type duplexWrite struct {
	done chan struct{} // closed when the writer has ended
	body recordingBody // the caller's body, when it is not in memory
	gate *continueGate // holds the body back for "Expect: 100-continue"; nil without

	mu          sync.Mutex
	writerDone  bool
	err         error // the write's error; errBodyPanicked after a panic
	panicVal    any
	readerDone  bool // the response side has ended (body read or closed, or failed)
	readerReuse bool // and says the connection may carry another request
	returned    bool // RoundTrip no longer waits for the writer
}

// sendDuplex writes req on a goroutine of its own while it reads the
// response head here. The response can come back before the body is all
// written; the writer then goes on, and the connection is given back once
// both the body and the response are done.
func (c *h1Conn) sendDuplex(lease shoal.Lease[*h1Conn], stop func() bool, req *http.Request, gzipOK, reused bool) (*http.Response, bool, error) {
	ctx := req.Context()
	dw := &duplexWrite{done: make(chan struct{})}
	wire, askedGzip := c.wireRequest(req, gzipOK, &dw.body)
	if expectsContinue(req) {
		if wire == req {
			c.wire = *req
			wire = &c.wire
		}
		dw.gate = newContinueGate(wire.Body, c.trace, c.expectContinueTimeout)
		wire.Body = dw.gate
	}
	c.dw = dw
	go c.writeDuplex(ctx, lease, stop, wire, dw)

	resp, err := readFinalResponse(c, req)
	if err != nil {
		return nil, false, c.duplexReadFailed(lease, stop, dw, err, reused)
	}
	if dw.gate != nil {
		// Answered without a 100 Continue: the body goes only on a
		// connection that lives on, as with net/http.
		dw.gate.decide(!resp.Close && !req.Close)
	}
	dw.mu.Lock()
	writerDone, werr := dw.writerDone, dw.err
	if !writerDone {
		dw.returned = true
	}
	dw.mu.Unlock()
	if writerDone && werr != nil {
		if werr == errBodyPanicked {
			c.end(lease, stop, false)
			panic(dw.panicVal)
		}
		if be := dw.body.bodyErr(); be != nil {
			c.end(lease, stop, false)
			return nil, false, be
		}
		// The write failed on the connection, but the server answered
		// (a 413 before it closed): that answer is the result, and the
		// connection ends with it. The writer bounded this read.
		c.nc.SetReadDeadline(time.Time{})
		if ctx.Err() != nil {
			c.interrupt() // the context's interrupt may have come before the deadline was cleared
		}
		resp.Close = true
	}
	return resp, askedGzip, nil
}

// duplexReadFailed ends a request whose response could not be read: it
// stops the writer (see end) and returns the body's own failure (or raises
// its panic again) when that was the cause, the connection's otherwise.
func (c *h1Conn) duplexReadFailed(lease shoal.Lease[*h1Conn], stop func() bool, dw *duplexWrite, rerr error, reused bool) error {
	c.end(lease, stop, false)
	dw.mu.Lock()
	writerDone, werr, raised := dw.writerDone, dw.err, dw.returned
	dw.mu.Unlock()
	if writerDone {
		if werr == errBodyPanicked && !raised {
			panic(dw.panicVal)
		}
		if be := dw.body.bodyErr(); be != nil {
			return be
		}
	}
	return &connError{op: "read response", err: rerr, reused: reused, sent: c.written.Load() > 0, received: c.read > 0}
}

// writeDuplex writes the request and flushes it, then ends the lease if the
// response side has ended already. A body that fails or panics breaks the
// request on the wire, so the socket is interrupted for the reader too; a
// connection that fails gives the reader earlyResponseWait to find an
// answer sent before it (unless the response is out already, and read at
// the caller's pace). A panic is raised again on the caller's goroutine
// while RoundTrip waits, and here once it has returned, as net/http's
// writer does.
func (c *h1Conn) writeDuplex(ctx context.Context, lease shoal.Lease[*h1Conn], stop func() bool, wire *http.Request, dw *duplexWrite) {
	var p any
	err := func() (err error) {
		defer func() {
			if r := recover(); r != nil {
				p, err = r, errBodyPanicked
			}
		}()
		return c.write(wire)
	}()
	c.forgetWire()
	broken := err == errBodyPanicked || dw.body.err != nil
	if broken {
		c.interrupt()
	}
	dw.mu.Lock()
	if err != nil && !broken && !dw.returned && !dw.readerDone {
		c.nc.SetReadDeadline(time.Now().Add(earlyResponseWait))
		if ctx.Err() != nil {
			c.interrupt()
		}
	}
	dw.err, dw.panicVal, dw.writerDone = err, p, true
	final, reuse := dw.readerDone, dw.readerReuse
	rethrow := err == errBodyPanicked && dw.returned // else the caller raises it
	dw.mu.Unlock()
	if final {
		c.finish(lease, stop, reuse && err == nil)
	}
	close(dw.done) // after the lease has ended, for end's wait
	if rethrow {
		panic(p)
	}
}

// end ends the response side of a request: with no body writer still
// running, the connection goes back to the pool (or is closed) now;
// otherwise the writer does it when it ends, if the write succeeded, and
// end waits up to writeWaitBeforeReuse for that (the last bytes of a body
// are usually on their way), so that the next request finds the
// connection idle rather than dialling, as net/http's reader waits for
// its writer before it pools a connection. A
// connection that cannot be reused (the server said close, the body was
// closed early, the response could not be read) has no use for the rest
// of the body: the writer is stopped (the socket interrupted, the
// caller's body closed, a body held for 100 Continue withheld) and waited
// for up to writerStopWait, so that the connection is closed by the time
// end returns, as without a writer.
func (c *h1Conn) end(lease shoal.Lease[*h1Conn], stop func() bool, reuse bool) {
	dw := c.dw
	if dw == nil {
		c.finish(lease, stop, reuse)
		return
	}
	dw.mu.Lock()
	dw.readerDone, dw.readerReuse = true, reuse
	writerDone, werr := dw.writerDone, dw.err
	dw.mu.Unlock()
	if writerDone {
		c.finish(lease, stop, reuse && werr == nil)
		return
	}
	wait := writeWaitBeforeReuse
	if !reuse {
		wait = writerStopWait
		c.interrupt()
		dw.body.closeOnce()
		if dw.gate != nil {
			dw.gate.decide(false)
		}
	}
	// Until the wait is over the caller may still raise the writer's
	// panic itself (duplexReadFailed looks once end returns), so the
	// writer is told that nobody waits for it only when end gives up.
	t := time.NewTimer(wait)
	select {
	case <-dw.done:
	case <-t.C:
		dw.mu.Lock()
		dw.returned = true
		dw.mu.Unlock()
		if reuse && !dw.body.reading.Load() {
			c.interrupt() // see writeWaitBeforeReuse
		}
	}
	t.Stop()
}
