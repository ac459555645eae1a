package shoalhttp

import (
	"compress/gzip"
	"io"
	"net/http"
)

// wantsGzip reports whether the Transport should ask for a gzip response
// on the caller's behalf, by net/http's rule: only when the caller did not
// choose an encoding or ask for a range (a range of the compressed bytes is
// not what the caller meant) and the response will have a body.
func wantsGzip(req *http.Request) bool {
	return req.Method != http.MethodHead &&
		req.Header.Get("Accept-Encoding") == "" &&
		req.Header.Get("Range") == ""
}

// withAcceptGzip returns a copy of req that asks for gzip, for writing
// only: it lives in c's scratch space and its header in c's scratch map, so
// that asking costs no allocation. The caller's request and header are left
// alone; header values are shared, not copied, since writing only reads them.
func (c *h1Conn) withAcceptGzip(req *http.Request) *http.Request {
	if c.wireHeader == nil {
		c.wireHeader = make(http.Header, len(req.Header)+1)
	}
	h := c.wireHeader
	clear(h)
	for k, v := range req.Header {
		h[k] = v
	}
	h["Accept-Encoding"] = acceptGzip
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

var acceptGzip = []string{"gzip"}

// gzipBody decompresses a response the Transport asked to be gzipped. The
// gzip reader is made on the first Read, so that a body closed unread costs
// nothing. gzip.Reader reads its input to EOF (it looks for a further
// member), so a body read to the end gives its connection back.
type gzipBody struct {
	body io.ReadCloser
	zr   *gzip.Reader
	err  error // sticky error from creating zr
}

func (g *gzipBody) Read(p []byte) (int, error) {
	if g.zr == nil {
		if g.err != nil {
			return 0, g.err
		}
		g.zr, g.err = gzip.NewReader(g.body)
		if g.err != nil {
			return 0, g.err
		}
	}
	return g.zr.Read(p)
}

func (g *gzipBody) Close() error { return g.body.Close() }
