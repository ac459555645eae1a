package shoalhttp

import (
	"context"
	"errors"
	"io"
	"sync/atomic"

	"github.com/shoalpool/shoal"
)

// errBodyClosed is what net/http's bodies say too.
var errBodyClosed = errors.New("http: read on closed response body")

// h1Body is an HTTP/1.1 response body. Reading it to the end gives the
// connection back to the pool; closing it before the end closes the
// connection, since the rest of the body is still on the wire. Close may be
// called while a Read is blocked, to abort it.
type h1Body struct {
	rc     io.ReadCloser // net/http's body reader over the connection's bufio.Reader
	c      *h1Conn
	lease  shoal.Lease[*h1Conn]
	stop   func() bool // stops the context's interrupt; nil without one
	ctx    context.Context
	cancel <-chan struct{} // the request's Cancel (http.Client's Timeout), nil for none
	reuse  bool            // the connection may carry another request after this one

	// done: the connection was given back or closed, by the first of EOF,
	// a read error or Close. After it rc must not be touched.
	done    atomic.Bool
	closed  atomic.Bool
	doneErr error // what Read returns after done; set by the Read that ended it
}

func (b *h1Body) Read(p []byte) (int, error) {
	if b.closed.Load() {
		return 0, errBodyClosed
	}
	if b.done.Load() {
		return 0, b.doneErr
	}
	n, err := b.rc.Read(p)
	if err == nil {
		return n, nil
	}
	if err != io.EOF && b.ctx.Err() != nil {
		err = bodyError(b.cancel, b.ctx.Err())
	}
	if b.done.CompareAndSwap(false, true) {
		b.doneErr = err
		b.c.end(b.lease, b.stop, err == io.EOF && b.reuse)
	}
	return n, err
}

// Close closes the body. Before the end of the body it closes the
// connection too (reading the rest could take any amount of time).
func (b *h1Body) Close() error {
	b.closed.Store(true)
	if b.done.CompareAndSwap(false, true) {
		b.c.end(b.lease, b.stop, false)
	}
	return nil
}
