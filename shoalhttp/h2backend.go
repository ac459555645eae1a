package shoalhttp

import (
	"context"
	"errors"
	"io"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal"
)

// h2Backend serves an origin over HTTP/2 on a multiplexed shoal pool: each
// connection serves up to its stream limit at once, the least-loaded one
// takes the next request, and a new one is dialled when all are full.
type h2Backend struct {
	originPool[h2Conn, *h2Conn]
}

// errNotH2: a later connection to an origin that spoke HTTP/2 negotiated
// something else.
var errNotH2 = errors.New("server no longer negotiates HTTP/2 (ALPN); the origin's protocol was learned from its first connection")

// newH2Backend builds the origin's HTTP/2 pool, whose first dial returns
// seed, the probe's connection: its stream limit stands for all.
func newH2Backend(o *origin, seed *h2Conn) (*h2Backend, error) {
	b := &h2Backend{}
	opts := o.t.opts
	err := b.open(o, seed, b.dial, func(cfg *shoal.Config[*h2Conn]) {
		// One HTTP/2 connection carries many requests, and the least-loaded
		// one takes the next, so an idle one does not stay idle: MinIdle is a
		// floor on open connections here, as MinConns is (the core refuses
		// MinIdle with MaxStreams > 1).
		cfg.MinIdle = 0
		cfg.MinConns = max(opts.h2MinConns(), opts.MinIdle)
		// The first connection's limit stands for all, and each connection
		// whose server announced less in its SETTINGS starts at that
		// (StreamLimit); a limit the server changes later is followed
		// with SetStreamLimit as the SETTINGS frame is read, by the next
		// request or the next to end on the connection (followLimit).
		cfg.MaxStreams = int(seed.limit.Load())
		cfg.Hooks.StreamLimit = func(c *h2Conn) int { return int(c.limit.Load()) }
		cfg.Partitions = 0 // idle stacks are the exclusive engine's: Options.Partitions is HTTP/1.1's
		cfg.Hooks.BeforeAcquire = func(_ context.Context, c *h2Conn) bool { return c.usable() }
	})
	if err != nil {
		return nil, err
	}
	return b, nil
}

// dial opens a new HTTP/2 connection to the origin; an https server that
// no longer chooses HTTP/2 is an error.
func (b *h2Backend) dial(ctx context.Context) (*h2Conn, error) {
	nc, proto, err := b.o.d.dial(ctx, alpnBoth)
	if err != nil {
		return nil, err
	}
	if b.o.key.scheme == "https" && proto != "h2" {
		nc.Close()
		return nil, errNotH2
	}
	return b.o.newH2Conn(ctx, nc)
}

// roundTrip sends req on the least-loaded connection, retrying once when
// the server provably did not process it (see h2CanRetry): on the
// least-loaded connection again, which is another one unless the failed
// attempt's connection is still usable, as after a refused stream. The
// first acquire counts its wait from since when it is not zero.
func (b *h2Backend) roundTrip(req *http.Request, tr *reqTrace, since time.Time) (*http.Response, error) {
	ctx := req.Context()
	orig := req
	for attempt := 0; ; attempt++ {
		// The core dials one connection per MaxStreams waiters, and a
		// dial that lands serving fewer (a server's lower limit) starts
		// the next one, so a crowd that arrives at once is served as the
		// dials land (the core's TestMuxCrowdDialsPerMaxStreams).
		lease, err := b.acquireStream(req, tr, attempt, since)
		since = time.Time{}
		if err != nil {
			return nil, err
		}
		c := lease.Value()
		if ct := tr.trace(); ct != nil && ct.GotConn != nil {
			ct.GotConn(c.gotConnInfo())
		}
		c.markStarted()
		send, held := holdBody(req)
		resp, err := c.cc.RoundTrip(send)
		if err != nil {
			c.settle(lease, false)
			if req, err = retryOrFail(ctx, send, attempt, err, h2CanRetry); err != nil {
				held.release(true)
				return nil, err
			}
			continue
		}
		held.release(false)
		resp.Request = orig
		if bodiless(req, resp) {
			// The stream ended with the response's head: its slot is free
			// now, as an HTTP/1.1 connection is for these, whether or not
			// the caller closes the (empty) body.
			c.settle(lease, true)
			return resp, nil
		}
		//lint:ignore SA1019 req.Cancel is how http.Client signals its Timeout (see timeout.go)
		resp.Body = &h2Body{rc: resp.Body, c: c, lease: lease, ctx: ctx, cancel: req.Cancel}
		return resp, nil
	}
}

// maxLimitMoves bounds how many times one acquire moves off a connection
// whose server has just lowered its stream limit: each move needs a new
// SETTINGS frame, so a server that keeps sending them cannot keep a
// request going round; past the bound it waits on the last connection.
const maxLimitMoves = 4

// acquireStream acquires a stream on a connection with room for it by the
// server's latest SETTINGS (followLimit), and counts it in the connection's
// inFlight. One whose server has lowered its limit to the streams it
// carries, or to 0, goes back unused: the pool knows its new limit, and the
// next acquire takes another connection or dials one, instead of the
// request waiting inside x/net for a stream the server may not give until
// its context ends. The stream is counted before followLimit reads the
// limit, so that a SETTINGS frame read after it sees the stream
// (stopNewStreams). The first acquire counts its wait from since when it
// is not zero.
func (b *h2Backend) acquireStream(req *http.Request, tr *reqTrace, attempt int, since time.Time) (shoal.Lease[*h2Conn], error) {
	for moves := 0; ; moves++ {
		lease, err := b.acquire(req, tr, attempt, since)
		since = time.Time{}
		if err != nil {
			return lease, err
		}
		c := lease.Value()
		c.inFlight.Add(1)
		if moves == maxLimitMoves || c.followLimit(lease) {
			return lease, nil
		}
		c.inFlight.Add(-1)
		lease.Release()
	}
}

// bodiless reports whether a response has no body by the protocol's rules:
// the answer to a HEAD, a 204 No Content or a 304 Not Modified.
func bodiless(req *http.Request, resp *http.Response) bool {
	return req.Method == http.MethodHead || resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified
}

// h2Body is an HTTP/2 response body; the stream's lease ends with the first
// of EOF, a read error or Close.
type h2Body struct {
	rc     io.ReadCloser
	c      *h2Conn
	lease  shoal.Lease[*h2Conn]
	ctx    context.Context
	cancel <-chan struct{} // the request's Cancel (http.Client's Timeout), nil for none
	done   atomic.Bool
}

func (b *h2Body) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		b.finish(err == io.EOF)
		if err != io.EOF && b.ctx.Err() != nil {
			err = bodyError(b.cancel, b.ctx.Err())
		}
	}
	return n, err
}

func (b *h2Body) Close() error {
	err := b.rc.Close() // resets the stream if it is still open
	b.finish(true)
	return err
}

// finish ends the stream's lease once; ok says the stream ended normally
// (a read error may mean the connection broke, which settle then checks).
func (b *h2Body) finish(ok bool) {
	if b.done.CompareAndSwap(false, true) {
		b.c.settle(b.lease, ok)
	}
}
