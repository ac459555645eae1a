package main

import (
	"context"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal"
)

// ccTransport is the other design for an HTTP pool, weighed against shoalhttp's own
// connections: shoal pools net/http's own connections, made with Go 1.26's
// Transport.NewClientConn, one pool per origin. net/http then writes and
// reads every request (HTTP/1.1 or HTTP/2, TLS, proxies), and shoal only
// decides which connection carries it. It is the smallest such transport
// that is correct for the benchmark: a lease per request, held until the
// body is closed or read to its end, a connection whose Err is set
// discarded, and one retry on another connection for a request whose
// connection died under it. What a real one needs besides (learning an origin's protocol
// from its first connection, as shoalhttp's probe does, instead of taking
// HTTP/2 for every https origin; retries; the stream limit the server
// advertises) is left out; none of it is on a request's path.
type ccTransport struct {
	t          *http.Transport // makes the connections: TLS, protocols
	maxConns   int
	maxStreams int // for an https origin; an http one carries one at a time

	mu    sync.Mutex
	pools map[string]*shoal.Pool[*http.ClientConn]
}

func newCCTransport(tlsCfg *tls.Config, maxConns, maxStreams int) *ccTransport {
	t := &http.Transport{TLSClientConfig: tlsCfg, ForceAttemptHTTP2: true}
	if tlsCfg != nil {
		t.TLSClientConfig = tlsCfg.Clone()
	}
	return &ccTransport{t: t, maxConns: maxConns, maxStreams: maxStreams, pools: make(map[string]*shoal.Pool[*http.ClientConn])}
}

// pool returns the origin's pool, making it on first use.
func (c *ccTransport) pool(scheme, host string) (*shoal.Pool[*http.ClientConn], error) {
	key := scheme + "://" + host
	c.mu.Lock()
	defer c.mu.Unlock()
	if p := c.pools[key]; p != nil {
		return p, nil
	}
	streams := 1
	if scheme == "https" {
		streams = c.maxStreams
	}
	p, err := shoal.New(shoal.Config[*http.ClientConn]{
		Dial: func(ctx context.Context) (*http.ClientConn, error) {
			return c.t.NewClientConn(ctx, scheme, host)
		},
		Close:       (*http.ClientConn).Close,
		MaxConns:    c.maxConns,
		MaxStreams:  streams,
		MaxIdleTime: 90 * time.Second,
		DialTimeout: 30 * time.Second,
		Hooks: shoal.Hooks[*http.ClientConn]{
			BeforeAcquire: func(_ context.Context, cc *http.ClientConn) bool { return cc.Err() == nil },
		},
	})
	if err != nil {
		return nil, fmt.Errorf("pool for %s: %w", key, err)
	}
	c.pools[key] = p
	return p, nil
}

// RoundTrip sends req on a leased connection; the lease ends with the body.
// A request that fails because its connection died under it (the server
// closed an idle keep-alive connection as the request went out) is sent
// once more on another, when its body can be sent again: net/http's
// Transport does the same inside, and ClientConn leaves it to its owner.
func (c *ccTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	p, err := c.pool(req.URL.Scheme, req.URL.Host)
	if err != nil {
		return nil, err
	}
	for attempt := 0; ; attempt++ {
		l, err := p.Acquire(req.Context())
		if err != nil {
			return nil, err
		}
		cc := l.Value()
		resp, err := cc.RoundTrip(req)
		if err == nil {
			resp.Body = &leaseBody{rc: resp.Body, lease: l}
			return resp, nil
		}
		if cc.Err() == nil {
			l.Release()
			return nil, err
		}
		l.Discard()
		if attempt > 0 || req.Context().Err() != nil || (req.Body != nil && req.GetBody == nil) {
			return nil, err
		}
		if req.GetBody != nil {
			body, berr := req.GetBody()
			if berr != nil {
				return nil, err
			}
			req = req.Clone(req.Context())
			req.Body = body
		}
	}
}

// close closes every origin's pool.
func (c *ccTransport) close(ctx context.Context) {
	c.mu.Lock()
	defer c.mu.Unlock()
	for _, p := range c.pools {
		p.Close(ctx)
	}
}

// leaseBody ends its lease once, at EOF or Close, whichever comes first.
type leaseBody struct {
	rc    io.ReadCloser
	lease shoal.Lease[*http.ClientConn]
	done  atomic.Bool
}

func (b *leaseBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if err != nil {
		b.end(err != io.EOF)
	}
	return n, err
}

func (b *leaseBody) Close() error {
	err := b.rc.Close()
	b.end(false)
	return err
}

func (b *leaseBody) end(broken bool) {
	if !b.done.CompareAndSwap(false, true) {
		return
	}
	if broken && b.lease.Value().Err() != nil {
		b.lease.Discard()
		return
	}
	b.lease.Release()
}
