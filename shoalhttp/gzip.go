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
