package shoalhttp

import (
	"context"
	"net/http"
	"time"

	"github.com/shoalpool/shoal"
)

// h1Backend serves an origin over HTTP/1.1: one request per connection at a
// time, on an exclusive shoal pool.
type h1Backend struct {
	originPool[h1Conn, *h1Conn]
}

// newH1Backend builds the origin's HTTP/1.1 pool, whose first dial returns
// seed if it is not nil.
func newH1Backend(o *origin, seed *h1Conn) (*h1Backend, error) {
	b := &h1Backend{}
	err := b.open(o, seed, b.dial, func(cfg *shoal.Config[*h1Conn]) {
		cfg.BargeWindow = o.t.opts.BargeWindow // exclusive connections only: not in poolConfig
		cfg.Hooks.BeforeAcquire = h1BeforeAcquire
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// h1BeforeAcquire keeps a connection that the server closed while it was
// idle from being handed out: the request would fail on it, or need a
// retry. A connection that never carried a request is checked too: one
// opened ahead of its requests (Warm, MinIdle, a dial whose waiter was
// served meanwhile) may sit idle as long as any, and the request failing
// on it would not be retried, the connection being fresh. Only a TLS
// connection just dialled is trusted: the bytes waiting on it are the
// handshake's session tickets, which only a read that waits out
// tlsIdleReadWait tells from a close_notify.
func h1BeforeAcquire(_ context.Context, c *h1Conn) bool {
	if c.requests == 0 && c.peek.TLS() && idleSince(c.idleAt) < freshTLSConnTrust {
		return true
	}
	return c.idleAlive()
}

// freshTLSConnTrust is how long after its dial a TLS connection that
// never carried a request is handed out unchecked (see h1BeforeAcquire):
// long enough for a dial made for a waiting request to reach it, far
// shorter than the wait after which a server gives up on a connection
// that sends it nothing.
const freshTLSConnTrust = 100 * time.Millisecond

// dial opens a new connection to the origin's first hop (its proxy, or
// the server), offering HTTP/1.1 alone.
func (b *h1Backend) dial(ctx context.Context) (*h1Conn, error) {
	nc, _, err := b.o.d.dial(ctx, alpnHTTP1)
	if err != nil {
		return nil, err
	}
	return newH1Conn(b.o, nc), nil
}

// roundTrip sends req on a pooled connection, retrying once on another
// connection when a reused one turns out dead before the server answered
// and req can be replayed (see the package doc). The first acquire counts
// its wait from since when it is not zero.
func (b *h1Backend) roundTrip(req *http.Request, tr *reqTrace, since time.Time) (*http.Response, error) {
	ctx := req.Context()
	orig := req
	gzipOK := !b.o.t.opts.DisableCompression
	for attempt := 0; ; attempt++ {
		lease, err := b.acquire(req, tr, attempt, since)
		since = time.Time{}
		if err != nil {
			return nil, err
		}
		c := lease.Value()
		if tr != nil {
			tr.gotConn(c.gotConnInfo())
		}
		resp, err := c.roundTrip(lease, req, gzipOK, tr.trace())
		if err == nil {
			resp.Request = orig
			return resp, nil
		}
		if req, err = retryOrFail(ctx, req, attempt, err, h1CanRetry); err != nil {
			return nil, err
		}
	}
}
