package shoalhttp

import (
	"bufio"
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"net/http/httptrace"
	"strings"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/peek"
)

// h1Conn is one HTTP/1.1 connection with the buffers that outlive each
// request on it.
type h1Conn struct {
	nc   net.Conn
	br   *bufio.Reader
	bw   *bufio.Writer
	info ConnInfo

	// requests counts the requests this connection completed and returned
	// to the pool; 0 means it has carried none yet. Touched only by the lease
	// holder (the pool's hand-over orders the accesses), as are idleAt and
	// trace.
	requests int
	idleAt   int64                  // monoNow when it last went back to the pool, or was dialled
	trace    *httptrace.ClientTrace // the current request's, nil for none

	// Bytes that crossed the socket during the current request, to tell a
	// connection that died before anything was exchanged from one that
	// died mid-request. written is counted by the body's writer, which may
	// run beside the response's reader (see sendDuplex).
	written atomic.Int64
	read    int64
	// readLimit is how many more bytes may be read from the socket:
	// maxHead while a response head is read (see readFinalResponse),
	// unlimited otherwise.
	readLimit int64
	maxHead   int64 // Options.MaxResponseHeaderBytes

	// dw is the current request's body writer when it runs beside the
	// response's reader; nil when the body was written first.
	dw *duplexWrite
	// expectContinueTimeout is Options.ExpectContinueTimeout (negative:
	// do not wait).
	expectContinueTimeout time.Duration

	// Scratch space for the request as written when the Transport adds a
	// header (see withAcceptGzip) or records the body's errors (see
	// wireRequest).
	wire       http.Request
	wireHeader http.Header
	body       recordingBody

	peek peek.Peeker // the idle liveness check (alive.go)

	// A connection to a forward proxy (a plain-http origin through a
	// proxy) writes requests in absolute form, with the proxy's
	// credentials when it has some.
	forward        bool
	proxyAuth      string   // the Proxy-Authorization value, "" for none
	proxyAuthValue []string // proxyAuth as a header value
}

// Buffer sizes, as net/http's Transport uses.
const (
	h1ReadBufferSize  = 4 << 10
	h1WriteBufferSize = 4 << 10
)

// newH1Conn wraps nc, a connection to o's first hop (its proxy, or the
// origin).
func newH1Conn(o *origin, nc net.Conn) *h1Conn {
	key := o.key
	c := &h1Conn{nc: nc, info: newConnInfo(o.name, protoHTTP1, nc), expectContinueTimeout: o.t.opts.ExpectContinueTimeout,
		readLimit: math.MaxInt64, maxHead: o.t.opts.MaxResponseHeaderBytes, idleAt: monoNow()}
	if key.forwardProxied() {
		c.forward = true
		if c.proxyAuth = key.proxy.auth; c.proxyAuth != "" {
			c.proxyAuthValue = []string{c.proxyAuth}
		}
	}
	c.br = bufio.NewReaderSize(countingReader{c}, h1ReadBufferSize)
	c.bw = bufio.NewWriterSize(countingWriter{c}, h1WriteBufferSize)
	c.peek.Init(nc)
	return c
}

func (c *h1Conn) close() error { return c.nc.Close() }

type countingReader struct{ c *h1Conn }

func (r countingReader) Read(p []byte) (int, error) {
	c := r.c
	if c.readLimit <= 0 {
		return 0, errHeadTooLarge
	}
	if int64(len(p)) > c.readLimit {
		p = p[:c.readLimit]
	}
	n, err := c.nc.Read(p)
	c.read += int64(n)
	c.readLimit -= int64(n)
	return n, err
}

// errHeadTooLarge: a response head went past MaxResponseHeaderBytes.
var errHeadTooLarge = errors.New("server response head exceeded Options.MaxResponseHeaderBytes")

type countingWriter struct{ c *h1Conn }

func (w countingWriter) Write(p []byte) (int, error) {
	n, err := w.c.nc.Write(p)
	w.c.written.Add(int64(n))
	return n, err
}

// aLongTimeAgo is a deadline in the past: setting it makes blocked reads and
// writes on the connection return at once.
var aLongTimeAgo = time.Unix(1, 0)

// interrupt unblocks the request in progress when its context ends.
func (c *h1Conn) interrupt() { c.nc.SetDeadline(aLongTimeAgo) }

// connError is a failure of the connection itself while sending a request
// or reading its response, with what had crossed the socket by then.
type connError struct {
	op       string // "write request" or "read response"
	err      error
	reused   bool // the connection had carried a request before
	sent     bool // some bytes of this request reached the socket
	received bool // some bytes of a response arrived
}

func (e *connError) Error() string { return e.op + ": " + e.err.Error() }
func (e *connError) Unwrap() error { return e.err }

// roundTrip writes req and reads the response head. On success the
// connection stays leased to the response body, which gives it back; on
// error it has been discarded (or will be, by a body writer still
// stopping).
func (c *h1Conn) roundTrip(lease shoal.Lease[*h1Conn], req *http.Request, gzipOK bool, trace *httptrace.ClientTrace) (*http.Response, error) {
	ctx := req.Context()
	c.trace = trace
	c.dw = nil
	reused := c.requests > 0
	c.written.Store(0)
	c.read = 0
	var stop func() bool
	if ctx.Done() != nil {
		stop = context.AfterFunc(ctx, c.interrupt)
	}

	var resp *http.Response
	var askedGzip bool
	var err error
	if writesConcurrently(req) {
		resp, askedGzip, err = c.sendDuplex(lease, stop, req, gzipOK, reused)
	} else {
		resp, askedGzip, err = c.sendThenRead(lease, stop, req, gzipOK, reused)
	}
	if err != nil {
		return nil, err
	}
	if resp.StatusCode == http.StatusSwitchingProtocols {
		return c.upgrade(ctx, lease, stop, resp)
	}

	reuse := !resp.Close && !req.Close
	if resp.Body == http.NoBody {
		c.end(lease, stop, reuse)
		return resp, nil
	}
	//lint:ignore SA1019 req.Cancel is how http.Client signals its Timeout (see timeout.go)
	body := &h1Body{rc: resp.Body, c: c, lease: lease, stop: stop, ctx: ctx, cancel: req.Cancel, reuse: reuse}
	resp.Body = body
	if askedGzip && strings.EqualFold(resp.Header.Get("Content-Encoding"), "gzip") {
		resp.Header.Del("Content-Encoding")
		resp.Header.Del("Content-Length")
		resp.ContentLength = -1
		resp.Uncompressed = true
		resp.Body = &gzipBody{body: body}
	}
	return resp, nil
}

// sendThenRead writes req to the end and then reads the response head, on
// the calling goroutine: for requests without a body or with a small one
// in memory (see writesConcurrently). On error the lease has ended.
func (c *h1Conn) sendThenRead(lease shoal.Lease[*h1Conn], stop func() bool, req *http.Request, gzipOK, reused bool) (*http.Response, bool, error) {
	ctx := req.Context()
	wire, askedGzip := c.wireRequest(req, gzipOK, &c.body)
	err := c.writeRequest(wire, func() { c.forgetWire(); c.finish(lease, stop, false) })
	bodyErr := c.body.bodyErr()
	if wire != req {
		c.forgetWire()
	}
	var resp *http.Response
	if err != nil {
		if bodyErr != nil {
			c.finish(lease, stop, false)
			return nil, false, bodyErr
		}
		if ctx.Err() == nil {
			resp = c.earlyResponse(req)
		}
		if resp == nil {
			c.finish(lease, stop, false)
			return nil, false, &connError{op: "write request", err: err, reused: reused, sent: c.written.Load() > 0}
		}
		return resp, askedGzip, nil
	}
	// 1xx answers (100 Continue, 103 Early Hints) come before the real
	// one.
	resp, err = readFinalResponse(c, req)
	if err != nil {
		c.finish(lease, stop, false)
		return nil, false, &connError{op: "read response", err: err, reused: reused, sent: true, received: c.read > 0}
	}
	return resp, askedGzip, nil
}

// finish ends the request: the connection goes back to the pool when reuse
// holds and the context did not interrupt it (firing the request's
// PutIdleConn, as net/http does), and is closed otherwise.
func (c *h1Conn) finish(lease shoal.Lease[*h1Conn], stop func() bool, reuse bool) {
	if stop != nil && !stop() {
		reuse = false // the context fired and put the deadline in the past
	}
	trace := c.trace
	c.trace = nil
	if reuse {
		c.requests++
		c.idleAt = monoNow()
		lease.Release() // c is someone else's from here
		if trace != nil && trace.PutIdleConn != nil {
			trace.PutIdleConn(nil)
		}
		return
	}
	lease.Discard()
}

// gotConnInfo describes c to the GotConn of the request that just took it:
// a connection that carried a request before was idle in the pool since
// then.
func (c *h1Conn) gotConnInfo() httptrace.GotConnInfo {
	info := httptrace.GotConnInfo{Conn: c.nc, Reused: c.requests > 0}
	if info.Reused {
		info.WasIdle = true
		info.IdleTime = idleSince(c.idleAt)
	}
	return info
}

// connInfo describes c to OnConnect and OnDisconnect.
func (c *h1Conn) connInfo() ConnInfo { return c.info }
