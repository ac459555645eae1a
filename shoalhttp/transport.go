//lint:file-ignore SA1019 x/net/http2 marks its client and server deprecated in favour of net/http's Go 1.26 ClientConn API; shoalhttp needs a ClientConn over a net.Conn that the pool dialled and owns, which only x/net offers.

package shoalhttp

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/shoalpool/shoal"
	"golang.org/x/net/http2"
)

// Transport is an http.RoundTripper that keeps one shoal pool of
// connections per origin. It is safe for concurrent use; create it with
// NewTransport and close it with Close.
type Transport struct {
	opts  Options                               // with defaults applied
	h2    *http2.Transport                      // builds HTTP/2 client connections on pooled conns
	proxy func(*http.Request) (*url.URL, error) // nil: every request goes direct (see proxyFunc)
	// mayNegotiateH2: some origin may speak HTTP/2 (see speaksH2), so a
	// WebSocket upgrade must be kept to an HTTP/1.1 pool of its own.
	mayNegotiateH2 bool

	mu      sync.RWMutex
	origins map[hostKey]*origin // guarded by mu
	closed  bool                // guarded by mu
	retired []*origin           // dropped by CloseIdleConnections, still draining; guarded by mu
	// limits holds SetMaxConns's limit per origin (by its canonical
	// hostKey), so that the pools of an origin made again after
	// CloseIdleConnections take it too; guarded by mu.
	limits map[hostKey]int32

	// first holds the budget of Options.MaxConnsTotal and the permits of
	// origins' first connections; nil without a cap (budget.go).
	first *firstConns

	// closeCtx ends when the Transport closes: it cuts short the warm-up
	// of WarmOrigins and the origins' first dials (origin.probe).
	closeCtx    context.Context
	closeCancel context.CancelFunc
	warmDone    chan struct{} // closed when the WarmOrigins goroutine ends
}

// hostKey is how a request names its origin before any parsing: the URL's
// scheme and Host as written, and the proxy URL as Options.Proxy returned
// it ("" for none). Several hostKeys may share one origin ("http://h" and
// "http://h:80").
type hostKey struct {
	scheme string
	host   string
	proxy  string // may hold the proxy's password: a map key, never shown
	h1only bool   // a WebSocket upgrade, which needs HTTP/1.1 (see wantsHTTP1)
}

// NewTransport checks opts and returns a Transport. It dials nothing itself
// unless opts.WarmOrigins is set, in which case those origins are warmed in
// the background.
func NewTransport(opts Options) (*Transport, error) {
	if err := opts.validate(); err != nil {
		return nil, err
	}
	t := &Transport{
		opts:    opts.withDefaults(),
		origins: make(map[hostKey]*origin),
		limits:  make(map[hostKey]int32),
		proxy:   proxyFunc(opts),
	}
	if n := t.opts.MaxConnsTotal; n > 0 {
		b, err := shoal.NewBudget(n, shoal.BudgetName("shoalhttp"))
		if err != nil {
			return nil, err
		}
		t.first = &firstConns{budget: b}
	}
	t.mayNegotiateH2 = !t.opts.DisableHTTP2 || t.opts.H2CPriorKnowledge
	t.h2 = &http2.Transport{
		AllowHTTP:          true,
		DisableCompression: t.opts.DisableCompression,
		// A connection silent this long is pinged, and closed when the
		// ping goes unanswered: a dead peer is found without a request
		// having to fail on it first.
		ReadIdleTimeout: h2ReadIdleTimeout,
		PingTimeout:     h2PingTimeout,
		// The pool already keeps a connection's requests within the
		// server's stream limit. Without this, a request handed a stream
		// slot a moment before x/net has finished the stream that freed it
		// finds the connection "not usable" and fails; with it, it waits
		// that moment on the same connection.
		StrictMaxConcurrentStreams: true,
		// MaxResponseHeaderBytes bounds HTTP/2 heads too, as
		// http.Transport's does: x/net advertises it to the server
		// and fails a response whose header list goes past it.
		MaxHeaderListSize: uint32(min(t.opts.MaxResponseHeaderBytes, math.MaxUint32)),
	}
	t.closeCtx, t.closeCancel = context.WithCancel(context.Background())
	t.warmDone = make(chan struct{})
	if len(t.opts.WarmOrigins) == 0 {
		close(t.warmDone)
	} else {
		go func() {
			defer close(t.warmDone)
			if err := t.Warm(t.closeCtx, t.opts.WarmOrigins...); err != nil && t.closeCtx.Err() == nil {
				t.opts.Logger.Info("shoalhttp: warming failed", "error", err)
			}
		}()
	}
	return t, nil
}

// HTTP/2 liveness: the ping cadence on a silent connection.
const (
	h2ReadIdleTimeout = 30 * time.Second
	h2PingTimeout     = 15 * time.Second
)

// maxOriginRetries bounds how often RoundTrip looks an origin up again when
// CloseIdleConnections closed its pool between lookup and acquire.
const maxOriginRetries = 3

// RoundTrip sends req over a pooled connection to its origin and returns the
// response. The connection goes back to the pool when the response body is
// read to the end or closed; close every body you get.
func (t *Transport) RoundTrip(req *http.Request) (*http.Response, error) {
	if req.URL == nil || req.Header == nil {
		closeRequestBody(req)
		return nil, errors.New("shoalhttp: request has a nil URL or Header")
	}
	if err := checkRequest(req); err != nil {
		closeRequestBody(req)
		return nil, err
	}
	for range maxOriginRetries {
		o, err := t.origin(req)
		if err != nil {
			closeRequestBody(req)
			return nil, err
		}
		resp, err := o.roundTrip(req)
		if errors.Is(err, errOriginClosed) {
			// The origin's pool closed between lookup and acquire: nothing
			// was sent and the body is untouched.
			if !t.isClosed() {
				continue // CloseIdleConnections raced with us
			}
			closeRequestBody(req)
			return nil, fmt.Errorf("shoalhttp: %s %s: transport closed: %w", req.Method, o.poolName(), shoal.ErrClosed)
		}
		if err != nil {
			return nil, o.wrap(req, err)
		}
		return resp, nil
	}
	closeRequestBody(req)
	return nil, fmt.Errorf("shoalhttp: %s %s: %w", req.Method, req.URL.Scheme+"://"+req.URL.Host, errOriginClosed)
}

// origin returns the origin of req, through the proxy Options.Proxy picks
// for it, creating it on first use.
func (t *Transport) origin(req *http.Request) (*origin, error) {
	hk := hostKey{scheme: req.URL.Scheme, host: req.URL.Host}
	if t.mayNegotiateH2 && wantsHTTP1(req) && t.speaksH2(req.URL.Scheme) {
		hk.h1only = true
	}
	var px proxyKey
	if t.proxy != nil {
		var err error
		if px, hk.proxy, err = t.resolveProxy(req); err != nil {
			return nil, fmt.Errorf("shoalhttp: %s %s: %w", req.Method, req.URL.Scheme+"://"+req.URL.Host, err)
		}
	}
	t.mu.RLock()
	o, closed := t.origins[hk], t.closed
	t.mu.RUnlock()
	if o != nil {
		return o, nil
	}
	if closed {
		return nil, fmt.Errorf("shoalhttp: transport closed: %w", shoal.ErrClosed)
	}
	key, err := originOf(req.URL)
	if err != nil {
		return nil, fmt.Errorf("shoalhttp: %w", err)
	}
	key.proxy, key.h1only = px, hk.h1only
	return t.originFor(hk, key, 0)
}

// namedOrigin returns the origin that requests to key (an origin named by
// Warm or SetMaxConns) go to: through the proxy Options.Proxy picks for a
// GET of its root. A limit above 0 is SetMaxConns's (see originFor).
func (t *Transport) namedOrigin(key originKey, limit int32) (*origin, error) {
	hk := hostKey{scheme: key.scheme, host: key.addr()}
	if t.proxy != nil {
		u := &url.URL{Scheme: key.scheme, Host: key.addr(), Path: "/"}
		req := &http.Request{Method: http.MethodGet, URL: u, Host: u.Host, Header: make(http.Header)}
		var err error
		if key.proxy, hk.proxy, err = t.resolveProxy(req); err != nil {
			return nil, fmt.Errorf("shoalhttp: %s: %w", key, err)
		}
	}
	return t.originFor(hk, key, limit)
}

// originFor returns the origin for key, registering hk as a name of it. A
// limit above 0 (SetMaxConns's) is kept for the origin and every origin
// made for key later, under the same lock as the map of origins, so that
// no origin made meanwhile misses it.
func (t *Transport) originFor(hk hostKey, key originKey, limit int32) (*origin, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, fmt.Errorf("shoalhttp: transport closed: %w", shoal.ErrClosed)
	}
	canon := hostKey{scheme: key.scheme, host: key.addr(), proxy: key.proxy.id(), h1only: key.h1only}
	if limit > 0 {
		t.limits[canon] = limit
	}
	o := t.origins[hk]
	if o == nil {
		o = t.origins[canon]
	}
	if o == nil {
		var err error
		if o, err = newOrigin(t, key, t.limits[canon]); err != nil {
			return nil, err
		}
		t.origins[canon] = o
	}
	t.origins[hk] = o
	if n := t.limits[canon]; n > 0 {
		o.maxConns.Store(n)
	}
	return o, nil
}

// speaksH2 reports whether an origin of this scheme may speak HTTP/2: an
// https one unless DisableHTTP2, a plain one with H2CPriorKnowledge.
func (t *Transport) speaksH2(scheme string) bool {
	if strings.EqualFold(scheme, "https") {
		return !t.opts.DisableHTTP2
	}
	return t.opts.H2CPriorKnowledge
}

func (t *Transport) isClosed() bool {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return t.closed
}

// Stats returns a snapshot of each origin's pool, keyed by
// scheme://host:port. Origins dropped by CloseIdleConnections are not
// included.
func (t *Transport) Stats() map[string]shoal.Stats {
	out := make(map[string]shoal.Stats)
	for _, o := range t.uniqueOrigins() {
		if b := o.current(); b != nil {
			out[o.name] = b.stats()
		}
	}
	return out
}

// SetMaxConns changes the most connections open to one origin ("https://host"
// or "http://host:port") while the Transport runs, as shoal.Pool.SetMaxConns
// does: growing serves waiting requests with new connections at once;
// shrinking closes idle connections now and busy ones when their responses
// are done, and never fails a request. It holds for the origin's later pools
// too (after CloseIdleConnections), from their first dial on: none opens
// more than n, not even for MinConns or MinIdle, which it keeps up to n.
// Calls racing each other for one origin leave it at the limit of the one
// that takes effect last, which is not necessarily the last to return:
// its pool now and its later pools alike. n must be in [1, 2147483647], as
// the core's MaxConns.
func (t *Transport) SetMaxConns(origin string, n int) error {
	key, err := parseOrigin(origin)
	if err != nil {
		return fmt.Errorf("shoalhttp: SetMaxConns: %w", err)
	}
	if n < 1 || n > maxConnsLimit {
		// Named as parsed, not as written: origin may carry a password.
		return fmt.Errorf("shoalhttp: SetMaxConns(%s, %d): must be in [1, %d]", key, n, maxConnsLimit)
	}
	o, err := t.namedOrigin(key, int32(n))
	if err != nil {
		return err
	}
	if err := o.applyLimit(); err != nil {
		return fmt.Errorf("shoalhttp: SetMaxConns %s: %w", o.name, err)
	}
	return nil
}

// maxConnsLimit bounds SetMaxConns: the core's bound on MaxConns, which
// the origin's pools are given.
const maxConnsLimit = math.MaxInt32

// uniqueOrigins returns each live origin once.
func (t *Transport) uniqueOrigins() []*origin {
	t.mu.RLock()
	defer t.mu.RUnlock()
	seen := make(map[*origin]bool, len(t.origins))
	var out []*origin
	for _, o := range t.origins {
		if !seen[o] {
			seen[o] = true
			out = append(out, o)
		}
	}
	return out
}

// CloseIdleConnections closes every idle connection; connections carrying
// a request close when their response body is done. The Transport stays
// usable: later requests open new connections (and learn each origin's
// protocol again). http.Client.CloseIdleConnections calls it.
func (t *Transport) CloseIdleConnections() {
	t.mu.Lock()
	if t.closed {
		t.mu.Unlock()
		return
	}
	seen := make(map[*origin]bool, len(t.origins))
	var dropped []*origin
	for _, o := range t.origins {
		if !seen[o] {
			seen[o] = true
			dropped = append(dropped, o)
		}
	}
	clear(t.origins)
	// Forget retired origins that have finished draining.
	kept := t.retired[:0]
	for _, o := range t.retired {
		if !o.drained() {
			kept = append(kept, o)
		}
	}
	t.retired = append(kept, dropped...)
	t.mu.Unlock()
	for _, o := range dropped {
		o.shutdown()
	}
}

// Close closes the Transport: new requests fail with an error matching
// shoal.ErrClosed, idle connections close at once and busy ones when their
// response body is done, and dials in flight are cut short (an origin's
// first one included, whose request then fails with shoal.ErrClosed too).
// Close waits for every connection to close and
// every goroutine of the Transport to end, or returns ctx's error if ctx
// ends first (connections then still close as their bodies are done).
// Calling Close again waits again.
func (t *Transport) Close(ctx context.Context) error {
	t.mu.Lock()
	t.closed = true
	seen := make(map[*origin]bool, len(t.origins))
	var all []*origin
	for _, o := range append(t.retired, mapValues(t.origins)...) {
		if !seen[o] {
			seen[o] = true
			all = append(all, o)
		}
	}
	t.mu.Unlock()
	t.closeCancel()
	for _, o := range all {
		o.shutdown()
	}
	select {
	case <-t.warmDone:
	case <-ctx.Done():
		return ctx.Err()
	}
	var errs []error
	for _, o := range all {
		if err := o.wait(ctx); err != nil {
			errs = append(errs, err)
			break // ctx ended: the others would say the same
		}
	}
	return errors.Join(errs...)
}

func mapValues(m map[hostKey]*origin) []*origin {
	out := make([]*origin, 0, len(m))
	for _, o := range m {
		out = append(out, o)
	}
	return out
}

// Warm connects to each origin ("https://host" or "http://host:port") and
// waits until max(MinIdle, MinConns, 1) connections are open to it (for
// HTTP/2 MinConns defaults to 2), at most its MaxConns as SetMaxConns
// leaves it, so that the first requests do not pay for a dial. It returns
// the first error.
func (t *Transport) Warm(ctx context.Context, origins ...string) error {
	for _, raw := range origins {
		key, err := parseOrigin(raw)
		if err != nil {
			return fmt.Errorf("shoalhttp: warm: %w", err)
		}
		o, err := t.namedOrigin(key, 0)
		if err != nil {
			return err
		}
		if err := o.warm(ctx); err != nil {
			return fmt.Errorf("shoalhttp: warm %s: %w", o.name, err)
		}
	}
	return nil
}

// closeRequestBody closes req's body, as a RoundTripper must even when it
// fails before sending.
func closeRequestBody(req *http.Request) {
	if req != nil && req.Body != nil {
		req.Body.Close()
	}
}
