package shoalhttp

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/textproto"
	"reflect"
	"strings"
	"sync/atomic"
	"time"
)

// errRequestBody marks a failure of the caller's request body, not of the
// connection: it is not retried, and the body's own error stays reachable
// through errors.Is and errors.As.
type errRequestBody struct{ err error }

func (e *errRequestBody) Error() string { return "reading request body: " + e.err.Error() }
func (e *errRequestBody) Unwrap() error { return e.err }

// recordingBody passes a request body through to http.Request.Write and
// keeps its first error, which Write wraps in a type of its own that hides
// it.
type recordingBody struct {
	rc      io.ReadCloser
	err     error
	closed  atomic.Bool // Close has been called: the body is closed once
	reading atomic.Bool // the writer waits in the caller's Read (see end)
}

func (b *recordingBody) Read(p []byte) (int, error) {
	b.reading.Store(true)
	n, err := b.rc.Read(p)
	b.reading.Store(false)
	if err != nil && err != io.EOF && b.err == nil {
		b.err = err
	}
	return n, err
}

func (b *recordingBody) Close() error {
	if b.closed.Swap(true) {
		return nil
	}
	return b.rc.Close()
}

// closeOnce closes the caller's body, if one is recorded, unless it has
// been closed already: to unblock a writer waiting in the body's Read (a
// pipe) when the request has failed.
func (b *recordingBody) closeOnce() {
	if b.rc != nil {
		b.Close()
	}
}

// bodyErr returns the caller's body's error, if the body failed while
// being written.
func (b *recordingBody) bodyErr() error {
	if b.err != nil {
		return &errRequestBody{b.err}
	}
	return nil
}

// The types io.NopCloser returns, to see through them as net/http does.
var (
	nopCloserType         = reflect.TypeOf(io.NopCloser(struct{ io.Reader }{}))
	nopCloserWriterToType = reflect.TypeOf(io.NopCloser(strings.NewReader("")))
)

// inMemoryBody reports whether a request body is one of the readers that
// cannot fail (http.NewRequest's bytes.Buffer, bytes.Reader and
// strings.Reader, wrapped in io.NopCloser). Those are written as they are:
// wrapped, net/http would no longer know them for in-memory and would
// flush the request's head in a write of its own.
func inMemoryBody(body io.ReadCloser) bool {
	_, ok := inMemoryLen(body)
	return ok
}

// inMemoryLen returns how many bytes an in-memory body (see inMemoryBody)
// has left to read; ok is false for any other body.
func inMemoryLen(body io.ReadCloser) (n int, ok bool) {
	var r io.Reader = body
	if t := reflect.TypeOf(body); t == nopCloserType || t == nopCloserWriterToType {
		r = reflect.ValueOf(body).Field(0).Interface().(io.Reader)
	}
	switch r := r.(type) {
	case *bytes.Reader:
		return r.Len(), true
	case *bytes.Buffer:
		return r.Len(), true
	case *strings.Reader:
		return r.Len(), true
	}
	return 0, false
}

// wireRequest returns the request to write: req itself, or a copy in c's
// scratch space that asks for gzip (askedGzip), carries the proxy's
// credentials or records the body's errors in rec. The copy costs no
// allocation; forgetWire drops it.
func (c *h1Conn) wireRequest(req *http.Request, gzipOK bool, rec *recordingBody) (wire *http.Request, askedGzip bool) {
	wire = req
	askedGzip = gzipOK && wantsGzip(req)
	// The caller's own Proxy-Authorization, if any, wins, as in net/http.
	proxyAuth := c.proxyAuth != "" && req.Header.Get("Proxy-Authorization") == ""
	if askedGzip || proxyAuth {
		wire = c.withHeaders(req, askedGzip, proxyAuth)
	}
	if req.Body != nil && req.Body != http.NoBody && !inMemoryBody(req.Body) {
		if wire == req {
			c.wire = *req
			wire = &c.wire
		}
		*rec = recordingBody{rc: req.Body}
		wire.Body = rec
	}
	return wire, askedGzip
}

// withHeaders returns a copy of req that asks for gzip and carries the
// proxy's credentials as told, for writing only: it lives in c's scratch
// space and its header in c's scratch map, so that adding headers costs no
// allocation. The caller's request and header are left alone; header
// values are shared, not copied, since writing only reads them.
func (c *h1Conn) withHeaders(req *http.Request, gzip, proxyAuth bool) *http.Request {
	if c.wireHeader == nil {
		c.wireHeader = make(http.Header, len(req.Header)+2)
	}
	h := c.wireHeader
	clear(h)
	for k, v := range req.Header {
		h[k] = v
	}
	if gzip {
		h["Accept-Encoding"] = acceptGzip
	}
	if proxyAuth {
		h["Proxy-Authorization"] = c.proxyAuthValue
	}
	c.wire = *req
	c.wire.Header = h
	return &c.wire
}

// forgetWire drops the scratch request's references to the caller's
// request once it has been written.
func (c *h1Conn) forgetWire() {
	c.wire = http.Request{}
	c.body = recordingBody{}
	clear(c.wireHeader)
}

// writeRequest writes wire and flushes it; to a forward proxy, with the
// request URI in absolute form. A panic in the caller's body
// (which Write reads) closes the connection before it goes on up: the
// request is half written, and a caller that recovers must not find the
// lease still held.
func (c *h1Conn) writeRequest(wire *http.Request, abandon func()) (err error) {
	defer func() {
		if p := recover(); p != nil {
			abandon()
			panic(p)
		}
	}()
	return c.write(wire)
}

// write writes wire and flushes it; to a forward proxy, with the request
// URI in absolute form.
func (c *h1Conn) write(wire *http.Request) error {
	write := wire.Write
	if c.forward {
		write = wire.WriteProxy
	}
	err := write(c.bw)
	if err == nil {
		err = c.bw.Flush()
	}
	return err
}

// earlyResponseWait bounds how long a request whose write failed looks for
// a response the server sent before it stopped reading.
const earlyResponseWait = 50 * time.Millisecond

// earlyResponse reads the response head a server sent before it closed
// the connection on a request it would not read to the end (413 Payload
// Too Large, 401 before a large upload): that answer, not the failed
// write, is the result. It gives up after earlyResponseWait.
func (c *h1Conn) earlyResponse(req *http.Request) *http.Response {
	if c.written.Load() == 0 {
		return nil // nothing reached the server: there is no answer to it
	}
	c.nc.SetReadDeadline(time.Now().Add(earlyResponseWait))
	resp, err := readFinalResponse(c, req)
	c.nc.SetReadDeadline(time.Time{})
	if err != nil {
		return nil
	}
	if req.Context().Err() != nil {
		c.interrupt() // the context's interrupt may have come before the deadline was cleared
	}
	resp.Close = true // the server stopped reading: the connection ends with this response
	return resp
}

// max1xxResponses bounds the informational responses (100 Continue, 103
// Early Hints) accepted before the real one.
const max1xxResponses = 16

var errTooMany1xx = fmt.Errorf("more than %d 1xx informational responses", max1xxResponses)

// readFinalResponse reads the response to req, skipping 1xx answers. A 101
// Switching Protocols is returned as it is, for the caller to switch. A
// 100 Continue lets a body held back for it go (see continueGate). It
// fires the request's GotFirstResponseByte, Got100Continue and
// Got1xxResponse hooks, as net/http does (Got1xxResponse's error ends the
// request).
func readFinalResponse(c *h1Conn, req *http.Request) (*http.Response, error) {
	// The head, 1xx answers included, may take at most maxHead bytes of
	// the socket, as net/http bounds it; what the buffer holds past it
	// (the body's first bytes) is already counted.
	c.readLimit = c.maxHead
	resp, err := readFinalResponseHead(c, req)
	if err != nil && c.readLimit <= 0 {
		err = fmt.Errorf("%w (%d bytes)", errHeadTooLarge, c.maxHead)
	}
	c.readLimit = math.MaxInt64
	return resp, err
}

func readFinalResponseHead(c *h1Conn, req *http.Request) (*http.Response, error) {
	trace := c.trace
	if trace != nil && trace.GotFirstResponseByte != nil {
		if b, err := c.br.Peek(1); err == nil && len(b) == 1 {
			trace.GotFirstResponseByte()
		}
	}
	for range max1xxResponses + 1 {
		resp, err := http.ReadResponse(c.br, req)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode < 100 || resp.StatusCode >= 200 || resp.StatusCode == http.StatusSwitchingProtocols {
			return resp, nil
		}
		if resp.StatusCode == http.StatusContinue && c.dw != nil && c.dw.gate != nil {
			if trace != nil && trace.Got100Continue != nil {
				trace.Got100Continue()
			}
			c.dw.gate.decide(true)
		}
		if trace != nil && trace.Got1xxResponse != nil {
			if err := trace.Got1xxResponse(resp.StatusCode, textproto.MIMEHeader(resp.Header)); err != nil {
				return nil, err
			}
		}
	}
	return nil, errTooMany1xx
}
