package shoalhttp

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync/atomic"

	"github.com/shoalpool/shoal"
)

// h2Backend serves an origin over HTTP/2 on a multiplexed shoal pool: each
// connection serves up to its stream limit at once, the least-loaded one
// takes the next request, and a new one is dialled when all are full.
type h2Backend struct {
	o      *origin
	pool   *shoal.Pool[*h2Conn]
	seed   atomic.Pointer[h2Conn] // the probe's connection, for the first dial
	traces dialTraces             // of the requests waiting for a stream
}

// errNotH2: a later connection to an origin that spoke HTTP/2 negotiated
// something else.
var errNotH2 = errors.New("server no longer negotiates HTTP/2 (ALPN); the origin's protocol was learned from its first connection")

func newH2Backend(o *origin, seed *h2Conn) (*h2Backend, error) {
	b := &h2Backend{o: o}
	b.seed.Store(seed)
	opts := o.t.opts
	cfg := poolConfig(opts, o.name, b.dial, (*h2Conn).close)
	// One HTTP/2 connection carries many requests, and the least-loaded
	// one takes the next, so an idle one does not stay idle: MinIdle is a
	// floor on open connections here, as MinConns is (the core refuses
	// MinIdle with MaxStreams > 1).
	cfg.MinIdle = 0
	cfg.MinConns = max(opts.h2MinConns(), opts.MinIdle)
	// The first connection's limit stands for all: every new connection
	// starts with it, and one whose server says less is lowered with
	// SetStreamLimit after its first request.
	cfg.MaxStreams = int(seed.limit.Load())
	cfg.Partitions = 0 // idle stacks are the exclusive engine's: Options.Partitions is HTTP/1.1's
	cfg.Hooks.BeforeAcquire = func(_ context.Context, c *h2Conn) bool { return c.usable() }
	if opts.OnConnect != nil {
		cfg.Hooks.OnConnect = func(_ context.Context, c *h2Conn) error {
			opts.OnConnect(c.info)
			return nil
		}
	}
	if opts.OnDisconnect != nil {
		cfg.Hooks.OnDisconnect = func(c *h2Conn, r shoal.Reason) { opts.OnDisconnect(c.info, r) }
	}
	pool, err := shoal.New(cfg)
	if err != nil {
		seed.close()
		return nil, err
	}
	b.pool = pool
	if n := o.maxConns.Load(); n > 0 {
		_ = pool.SetMaxConns(int(n)) // checked by Transport.SetMaxConns
	}
	return b, nil
}

func (b *h2Backend) setMaxConns(n int) error { return b.pool.SetMaxConns(n) }

func (b *h2Backend) dial(ctx context.Context) (*h2Conn, error) {
	if c := b.seed.Swap(nil); c != nil {
		return c, nil
	}
	ctx = b.traces.dialContext(ctx)
	nc, proto, err := b.o.d.dial(ctx, alpnBoth)
	if err != nil {
		return nil, err
	}
	if b.o.key.scheme == "https" && proto != "h2" {
		nc.Close()
		return nil, errNotH2
	}
	return newH2Conn(ctx, b.o.t.h2, b.o.name, nc, b.o.t.opts.MaxStreamsPerConn)
}

// roundTrip sends req on the least-loaded connection, retrying once on
// another one when the server provably did not process it (see h2CanRetry).
func (b *h2Backend) roundTrip(req *http.Request, tr *reqTrace) (*http.Response, error) {
	ctx := req.Context()
	orig := req
	for attempt := 0; ; attempt++ {
		// The core dials one connection per MaxStreams waiters, and a
		// dial that lands serving fewer (a server's lower limit) starts
		// the next one, so a crowd that arrives at once is served as the
		// dials land (the core's TestMuxCrowdDialsPerMaxStreams).
		lease, err := acquireTraced(ctx, b.pool, &b.traces, tr, b.o.hop, attempt)
		if err != nil {
			return nil, acquireErr(req, attempt, err)
		}
		c := lease.Value()
		c.inFlight.Add(1)
		if ct := tr.trace(); ct != nil && ct.GotConn != nil {
			ct.GotConn(c.gotConnInfo())
		}
		c.markStarted()
		resp, err := c.cc.RoundTrip(req)
		if err != nil {
			c.settle(lease, false)
			if ctx.Err() != nil {
				return nil, fmt.Errorf("request canceled: %w", ctx.Err())
			}
			if attempt == 0 && h2CanRetry(req, err) {
				if next, rerr := rewind(req); rerr == nil {
					req = next
					continue
				}
			}
			return nil, err
		}
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

// bodiless reports whether a response has no body by the protocol's rules:
// the answer to a HEAD, a 204 No Content or a 304 Not Modified.
func bodiless(req *http.Request, resp *http.Response) bool {
	return req.Method == http.MethodHead || resp.StatusCode == http.StatusNoContent || resp.StatusCode == http.StatusNotModified
}

func (b *h2Backend) warm(ctx context.Context) error {
	return warmPool(ctx, b.pool, max(b.o.t.opts.MinIdle, b.o.t.opts.h2MinConns()))
}

func (b *h2Backend) stats() shoal.Stats { return b.pool.Stats() }

func (b *h2Backend) close(ctx context.Context) error {
	if c := b.seed.Swap(nil); c != nil {
		c.close()
	}
	return b.pool.Close(ctx)
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
