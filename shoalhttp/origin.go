package shoalhttp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal"
)

// backend serves one origin's requests over one protocol, on one pool.
type backend interface {
	// roundTrip sends req; tr is its trace (nil for none), and since is
	// when req began to wait for the origin's first connection (the
	// probe), zero when it did not.
	roundTrip(req *http.Request, tr *reqTrace, since time.Time) (*http.Response, error)
	warm(ctx context.Context) error
	stats() shoal.Stats
	// setMaxConns resizes the pool (shoal.Pool.SetMaxConns).
	setMaxConns(n int) error
	// close closes the pool; with an ended ctx it returns at once and the
	// busy connections close as their requests finish.
	close(ctx context.Context) error
}

// errOriginClosed: the origin's pool was closed by CloseIdleConnections
// (or Close) between the lookup and the acquire; nothing was sent and the
// request's body was not touched, so RoundTrip can look the origin up
// again with the same request.
var errOriginClosed = errors.New("shoalhttp: origin's pool closed")

// origin is the Transport's state for one scheme://host:port: its dialer
// and, once the protocol is known, its backend.
type origin struct {
	t    *Transport
	key  originKey
	name string // key.String(), the Stats key
	hop  string // key.dialAddr(), what GetConn names
	d    *dialer
	// epoch is the zero of origin.now, the clock of refused.
	epoch time.Time

	be atomic.Pointer[backendRef] // nil until the protocol is known

	// maxConns is what Transport.SetMaxConns set for this origin, applied
	// to each pool made for it; 0 means Options.MaxConns. Stored under
	// Transport.mu, applied to the backend's pool under limitMu
	// (applyLimit).
	maxConns atomic.Int32
	limitMu  sync.Mutex

	// seedPermit is the probe's permit under MaxConnsTotal, from the
	// probe's dial until the backend's pool takes it (originPool.open);
	// only the probe's goroutine touches it.
	seedPermit shoal.BudgetPermit
	// seedMin is true while the probe holds the origin's MinConns
	// reserved under MaxConnsTotal, until the backend's pool takes it.
	seedMin bool
	// seedTook is how long the probe took to open the connection it
	// hands the backend's pool, for the pool's first dial to report
	// (seedDialObserver); only the probe's goroutine touches it.
	seedTook time.Duration

	mu       sync.Mutex
	probing  *probe // the probe in flight, if any; guarded by mu
	shutDown bool   // guarded by mu
	refused  refusal
	// logging counts the lines about probes being logged outside mu, and
	// loggedAll is closed when it falls back to 0: wait waits for them,
	// so that nothing is logged once Close has returned. Guarded by mu.
	logging   int
	loggedAll chan struct{}
}

// probe is one attempt to open an origin's first connection. Callers who
// arrive while it runs wait for it and share its error, rather than each
// trying in turn against a server that is down.
type probe struct {
	done chan struct{} // closed when the probe ends
	err  error         // set before done is closed
}

type backendRef struct{ b backend }

// newOrigin creates the origin. Plain-http origins speak HTTP/1.1 (or h2c,
// when asked, which needs a first connection to learn the server's stream
// limit; never through a proxy, which is spoken to in HTTP/1.1, nor for
// the pool of WebSocket upgrades); https origins learn their protocol from
// the first connection's ALPN unless HTTP/2 is disabled or the pool is
// for upgrades.
func newOrigin(t *Transport, key originKey, maxConns int32) (*origin, error) {
	o := &origin{t: t, key: key, name: key.String(), hop: key.dialAddr(), epoch: time.Now()}
	// Before the HTTP/1.1 pool below, which reads it as it is made.
	o.maxConns.Store(maxConns)
	o.d = newDialer(key, &t.opts)
	plainH1 := key.scheme == "http" && (!t.opts.H2CPriorKnowledge || key.forwardProxied() || key.h1only)
	tlsH1 := key.scheme == "https" && (t.opts.DisableHTTP2 || key.h1only)
	if plainH1 || tlsH1 {
		b, err := newH1Backend(o, nil)
		if err != nil {
			return nil, err
		}
		o.be.Store(&backendRef{b})
	}
	return o, nil
}

// current returns the backend, or nil while the protocol is unknown.
func (o *origin) current() backend {
	if r := o.be.Load(); r != nil {
		return r.b
	}
	return nil
}

// backend returns the origin's backend, probing the server with a first
// connection when the protocol is not known yet. Concurrent callers wait
// for one probe instead of each dialling. probed reports that this call
// ran the probe, under ctx.
func (o *origin) backend(ctx context.Context) (_ backend, probed bool, _ error) {
	for {
		if b := o.current(); b != nil {
			return b, false, nil
		}
		o.mu.Lock()
		if b := o.current(); b != nil {
			o.mu.Unlock()
			return b, false, nil
		}
		if o.shutDown {
			o.mu.Unlock()
			return nil, false, errOriginClosed
		}
		if err := o.refused.refuses(o.now()); err != nil {
			o.mu.Unlock()
			return nil, false, err
		}
		if pr := o.probing; pr != nil {
			o.mu.Unlock()
			select {
			case <-pr.done:
				if pr.err != nil {
					return nil, false, pr.err
				}
				continue
			case <-ctx.Done():
				return nil, false, ctx.Err()
			}
		}
		pr := &probe{done: make(chan struct{})}
		o.probing = pr
		o.mu.Unlock()

		b, started, err := o.probe(ctx)

		o.mu.Lock()
		o.probing = nil
		if err == nil {
			if o.shutDown {
				ended, cancel := context.WithCancel(context.Background())
				cancel()
				_ = b.close(ended)
				b, err = nil, errOriginClosed
			} else {
				o.be.Store(&backendRef{b})
			}
		} else if o.t.closeCtx.Err() != nil {
			// Cut short by Close (or failed under it): the request
			// fails as one sent after Close does (RoundTrip).
			err = errOriginClosed
		}
		serverFailed := err != nil && ctx.Err() == nil
		if serverFailed {
			// A failure of the server, not of this caller's context:
			// those waiting share it.
			pr.err = err
		}
		line := o.noteProbe(err, serverFailed && errors.Is(err, shoal.ErrDial), started)
		if !line.Empty() {
			o.startLine()
		}
		o.mu.Unlock()
		if err == nil {
			// Its pool read the limit as it was made; a SetMaxConns since
			// then found no backend to resize.
			_ = o.applyLimit() // a pool closed since has nothing to resize
		}
		close(pr.done)
		// Once the requests that waited for the probe are on their way:
		// they need not wait for the log either.
		if !line.Empty() {
			line.Log(o.probeLogger())
			o.endLine()
		}
		return b, err == nil, err
	}
}

// probe opens the origin's first connection and builds the backend that
// matches the protocol the server chose, handing it that connection.
// started is when the dial began (origin.now), after any wait for a permit
// under MaxConnsTotal: a run of failures counts from there, as the core's
// does, since that wait was for another origin's connection to close.
func (o *origin) probe(ctx context.Context) (_ backend, started int64, _ error) {
	// Close cuts the probe short, as the core pool's Close cuts its dials
	// short: a server that never answers must not hold Close up until the
	// dial's bound, nor a wait for a permit under MaxConnsTotal.
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	defer context.AfterFunc(o.t.closeCtx, cancel)()
	if f := o.t.first; f != nil {
		// Before the dial's bound starts, as the core asks its budget:
		// waiting for a permit is waiting for another origin's
		// connection to close, not a slow server.
		minConns := max(o.t.opts.MinConns, 0)
		if err := f.reserve(o.name, minConns, o.t.opts.MaxConnsTotal); err != nil {
			return nil, 0, err
		}
		o.seedMin = true
		defer func() {
			// Not taken by the pool: the probe failed before it.
			if o.seedMin {
				f.unreserve(minConns)
				o.seedMin = false
			}
			if o.seedPermit != nil {
				o.seedPermit.Release()
				o.seedPermit = nil
			}
		}()
		p, err := f.acquire(ctx)
		if err != nil {
			return nil, 0, fmt.Errorf("shoalhttp: waiting for a connection under MaxConnsTotal (%d): %w", o.t.opts.MaxConnsTotal, err)
		}
		o.seedPermit = p
	}
	// What the Observer hears of: a failure of the server's, not a probe
	// its caller gave up on or Close cut short (as backend judges it).
	unbounded := ctx
	if bound := o.t.opts.dialBound(); bound > 0 {
		// 0 is no bound (a negative DialTimeout or TLSHandshakeTimeout):
		// a timeout of 0 would fail the dial before it starts.
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, bound)
		defer cancel()
	}
	start, started := time.Now(), o.now()
	nc, proto, err := o.d.dial(ctx, alpnBoth)
	if err != nil {
		err = fmt.Errorf("%w: %w", shoal.ErrDial, err)
		if unbounded.Err() == nil {
			o.observeFailedProbe(time.Since(start), err)
		}
		return nil, started, err
	}
	if o.key.scheme == "https" && proto != "h2" {
		o.seedTook = time.Since(start)
		b, err := newH1Backend(o, newH1Conn(o, nc))
		return b, started, err
	}
	hc, err := o.newH2Conn(ctx, nc)
	if err != nil {
		err = fmt.Errorf("%w: %w", shoal.ErrDial, err)
		if unbounded.Err() == nil {
			o.observeFailedProbe(time.Since(start), err)
		}
		return nil, started, err
	}
	o.seedTook = time.Since(start)
	b, err := newH2Backend(o, hc)
	return b, started, err
}

// observeFailedProbe tells the origin's Observer of a first connection's
// dial that failed. No pool exists yet to tell it (the pool is made for
// the protocol the dial learns), and without this an origin whose server
// is down from the start would show no dial error in its metrics. A probe
// that succeeds is not told: its connection is the pool's first dial,
// which the pool reports with the probe's duration (seedDialObserver).
func (o *origin) observeFailedProbe(took time.Duration, err error) {
	if f := o.t.opts.Observer; f != nil {
		if obs := f(o.name); obs != nil {
			obs.ObserveDial(took, err)
		}
	}
}

// newH2Conn starts HTTP/2 on nc, a connection to the origin (see the
// function newH2Conn).
//
// Its error is marked permanent as a dial's is (markPermanent): over TLS
// 1.3 a server judges the client's certificate after the client's
// handshake is over, and its refusal arrives here, with the first frames.
func (o *origin) newH2Conn(ctx context.Context, nc net.Conn) (*h2Conn, error) {
	c, err := newH2Conn(ctx, o.t.h2, o.name, nc, o.t.opts.MaxStreamsPerConn)
	return c, markPermanent(err)
}

// roundTrip sends req through the origin's backend.
func (o *origin) roundTrip(req *http.Request) (*http.Response, error) {
	tr := newReqTrace(req)
	tr.getConn(o.hop)
	var since time.Time
	if o.current() == nil {
		// The request waits for the probe: its acquire counts that wait,
		// for the Observer and the wait span, as it would a pool's dial.
		since = time.Now()
	}
	b, probed, err := o.backend(req.Context())
	if err != nil {
		if !errors.Is(err, errOriginClosed) { // RoundTrip may send it elsewhere
			closeRequestBody(req)
		}
		return nil, err
	}
	if probed && tr != nil {
		tr.dialed = true // the probe's dial fired the dial hooks
	}
	return b.roundTrip(req, tr, since)
}

// warm opens max(MinIdle, MinConns, 1) connections (MinConns with its
// HTTP/2 default).
func (o *origin) warm(ctx context.Context) error {
	b, _, err := o.backend(ctx)
	if err != nil {
		return err
	}
	return b.warm(ctx)
}

// shutdown closes the origin's pool without waiting: idle connections close
// now, busy ones when their request ends.
func (o *origin) shutdown() {
	o.mu.Lock()
	o.shutDown = true
	o.mu.Unlock()
	if b := o.current(); b != nil {
		ended, cancel := context.WithCancel(context.Background())
		cancel()
		_ = b.close(ended)
	}
}

// wait waits until a shut-down origin's connections are all closed and its
// probe, if one was running, has ended and been logged.
func (o *origin) wait(ctx context.Context) error {
	o.mu.Lock()
	pr := o.probing
	o.mu.Unlock()
	if pr != nil {
		select {
		case <-pr.done:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := o.waitLines(ctx); err != nil {
		return err
	}
	if b := o.current(); b != nil {
		return b.close(ctx)
	}
	return nil
}

// drained reports whether a shut-down origin has no connection left.
func (o *origin) drained() bool {
	b := o.current()
	if b == nil {
		return true
	}
	s := b.stats()
	return s.TotalConns == 0 && s.Dialing == 0
}

// wrap makes err name the request's method and the origin's pool (the
// origin, after Options.Name when set), and nothing else of the request:
// the path and query may hold secrets.
func (o *origin) wrap(req *http.Request, err error) error {
	name := o.poolName()
	if errors.Is(err, shoal.ErrClosed) && o.t.isClosed() {
		return &requestError{msg: "shoalhttp: " + req.Method + " " + name + ": transport closed: " + err.Error(), err: err}
	}
	awaitClientTimeout(req, err)
	return &requestError{msg: "shoalhttp: " + req.Method + " " + name + ": " + err.Error(), err: err}
}

// poolName is the name of the origin's pool, as its logs, Stats and
// metrics give it: Options.Name, when set, before the origin.
func (o *origin) poolName() string { return poolName(o.t.opts.Name, o.name) }
