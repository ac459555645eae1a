package shoalhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"

	"github.com/shoalpool/shoal"
)

// h1Backend serves an origin over HTTP/1.1: one request per connection at a
// time, on an exclusive shoal pool.
type h1Backend struct {
	o    *origin
	pool *shoal.Pool[*h1Conn]
	alpn []string // what https dials offer
	// seed is the probe's connection, handed to the pool by its first dial.
	seed   atomic.Pointer[h1Conn]
	traces dialTraces // of the requests waiting for a connection
}

func newH1Backend(o *origin, seed *h1Conn, alpn []string) (*h1Backend, error) {
	b := &h1Backend{o: o, alpn: alpn}
	if seed != nil {
		b.seed.Store(seed)
	}
	opts := o.t.opts
	cfg := poolConfig(opts, o.name, b.dial, (*h1Conn).close)
	cfg.BargeWindow = opts.BargeWindow // exclusive connections only: not in poolConfig
	cfg.Hooks.BeforeAcquire = h1BeforeAcquire
	if opts.OnConnect != nil {
		cfg.Hooks.OnConnect = func(_ context.Context, c *h1Conn) error {
			opts.OnConnect(c.info)
			return nil
		}
	}
	if opts.OnDisconnect != nil {
		cfg.Hooks.OnDisconnect = func(c *h1Conn, r shoal.Reason) { opts.OnDisconnect(c.info, r) }
	}
	pool, err := shoal.New(cfg)
	if err != nil {
		if seed != nil {
			seed.close()
		}
		return nil, err
	}
	b.pool = pool
	if n := o.maxConns.Load(); n > 0 {
		_ = pool.SetMaxConns(int(n)) // checked by Transport.SetMaxConns
	}
	return b, nil
}

func (b *h1Backend) setMaxConns(n int) error { return b.pool.SetMaxConns(n) }

func (b *h1Backend) dial(ctx context.Context) (*h1Conn, error) {
	if c := b.seed.Swap(nil); c != nil {
		return c, nil
	}
	nc, _, err := b.o.d.dial(b.traces.dialContext(ctx), b.alpn)
	if err != nil {
		return nil, err
	}
	return newH1Conn(b.o, nc), nil
}

// h1BeforeAcquire keeps a connection that the server closed while it was
// idle from being handed out: the request would fail on it, or need a
// retry. A connection that never carried a request was just dialled.
func h1BeforeAcquire(_ context.Context, c *h1Conn) bool {
	return c.requests == 0 || c.idleAlive()
}

// roundTrip sends req on a pooled connection, retrying once on another
// connection when a reused one turns out dead before the server answered
// and req can be replayed (see the package doc).
func (b *h1Backend) roundTrip(req *http.Request, tr *reqTrace) (*http.Response, error) {
	ctx := req.Context()
	orig := req
	gzipOK := !b.o.t.opts.DisableCompression
	for attempt := 0; ; attempt++ {
		lease, err := acquireTraced(ctx, b.pool, &b.traces, tr, b.o.hop, attempt)
		if err != nil {
			return nil, acquireErr(req, attempt, err)
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
		if ctx.Err() != nil {
			return nil, fmt.Errorf("request canceled: %w", ctx.Err())
		}
		if attempt == 0 && h1CanRetry(req, err) {
			if next, rerr := rewind(req); rerr == nil {
				req = next
				continue
			}
		}
		return nil, err
	}
}

// acquireErr ends a request whose acquire failed. A pool closed under the
// first attempt (by CloseIdleConnections) is marked errOriginClosed, and
// the body left alone, so that RoundTrip can look the origin up again and
// send the same request; otherwise the body is closed, as a RoundTripper
// must.
func acquireErr(req *http.Request, attempt int, err error) error {
	if attempt == 0 && errors.Is(err, shoal.ErrClosed) {
		return fmt.Errorf("%w: %w", errOriginClosed, err)
	}
	closeRequestBody(req)
	return err
}

func (b *h1Backend) warm(ctx context.Context) error {
	return warmPool(ctx, b.pool, max(b.o.t.opts.MinIdle, b.o.t.opts.MinConns))
}

func (b *h1Backend) stats() shoal.Stats { return b.pool.Stats() }

func (b *h1Backend) close(ctx context.Context) error {
	if c := b.seed.Swap(nil); c != nil {
		c.close()
	}
	return b.pool.Close(ctx)
}
