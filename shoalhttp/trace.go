package shoalhttp

import (
	"context"
	"net/http"
	"net/http/httptrace"
	"sync"
	"time"

	"github.com/shoalpool/shoal"
)

// reqTrace is one request's httptrace.ClientTrace, with what the
// Transport knows about the request's connection so far. A nil *reqTrace
// (a request without a trace) is valid and fires nothing.
type reqTrace struct {
	ct *httptrace.ClientTrace
	// dialed: the request's own dial already ran under its context (the
	// origin's probe, which fires the dial hooks itself), so it does not
	// wait for a pool dial to fire them again.
	dialed bool
}

// newReqTrace returns req's trace, nil when it has none.
func newReqTrace(req *http.Request) *reqTrace {
	ct := httptrace.ContextClientTrace(req.Context())
	if ct == nil {
		return nil
	}
	return &reqTrace{ct: ct}
}

func (t *reqTrace) trace() *httptrace.ClientTrace {
	if t == nil {
		return nil
	}
	return t.ct
}

// getConn fires GetConn with the first hop's host:port (the proxy's, as
// net/http does, when there is one).
func (t *reqTrace) getConn(hostPort string) {
	if ct := t.trace(); ct != nil && ct.GetConn != nil {
		ct.GetConn(hostPort)
	}
}

// gotConn fires GotConn.
func (t *reqTrace) gotConn(info httptrace.GotConnInfo) {
	if ct := t.trace(); ct != nil && ct.GotConn != nil {
		ct.GotConn(info)
	}
}

// wantsDialHooks reports whether the request should hear of a dial the
// pool makes while it waits.
func (t *reqTrace) wantsDialHooks() bool {
	ct := t.trace()
	return ct != nil && !t.dialed && (ct.DNSStart != nil || ct.DNSDone != nil ||
		ct.ConnectStart != nil || ct.ConnectDone != nil ||
		ct.TLSHandshakeStart != nil || ct.TLSHandshakeDone != nil)
}

// dialTraces are the traces of the requests waiting for one pool's
// connection, oldest first. The pool dials in the background, under its
// own context; a dial takes the oldest waiting request's trace and fires
// its DNS, connect and TLS hooks, as net/http fires them on the request
// whose wait started the dial (even when that request ends up on another
// connection).
type dialTraces struct {
	mu      sync.Mutex
	waiting []*dialWaiter
}

type dialWaiter struct{ ct *httptrace.ClientTrace }

// wait registers t's request as waiting for a connection; done must be
// called with the result when the wait ends. It returns nil (and done
// accepts nil) when the request has no dial hooks.
func (d *dialTraces) wait(t *reqTrace) *dialWaiter {
	if !t.wantsDialHooks() {
		return nil
	}
	w := &dialWaiter{ct: t.ct}
	d.mu.Lock()
	d.waiting = append(d.waiting, w)
	d.mu.Unlock()
	return w
}

// done ends w's wait: a dial starting from now does not fire its hooks.
func (d *dialTraces) done(w *dialWaiter) {
	if w == nil {
		return
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	for i, x := range d.waiting {
		if x == w {
			d.waiting = append(d.waiting[:i], d.waiting[i+1:]...)
			return
		}
	}
}

// dialContext returns ctx carrying the oldest waiting request's trace, so
// that net.Dialer fires its DNS and connect hooks and the TLS handshake
// its TLS hooks; ctx as it is when nobody traced waits.
func (d *dialTraces) dialContext(ctx context.Context) context.Context {
	d.mu.Lock()
	var w *dialWaiter
	if len(d.waiting) > 0 {
		w = d.waiting[0]
		d.waiting = d.waiting[1:]
	}
	d.mu.Unlock()
	if w == nil {
		return ctx
	}
	return httptrace.WithClientTrace(ctx, w.ct)
}

// clockBase makes monotonic timestamps that fit an int64 (see monoNow).
var clockBase = time.Now()

// monoNow is a monotonic timestamp in nanoseconds, for the idle times
// GotConn reports.
func monoNow() int64 { return int64(time.Since(clockBase)) }

// idleSince returns how long ago monoNow gave at.
func idleSince(at int64) time.Duration { return time.Duration(monoNow() - at) }

// acquireTraced takes a lease from pool for one attempt at a request: a
// retry first fires GetConn again, as net/http does when it looks for a
// connection once more, and while the request waits its trace is the one a
// dial the pool starts for it fires its hooks on. A request that waited
// before it could ask the pool (for the probe) counts its wait from since,
// which is zero otherwise.
func acquireTraced[T any](ctx context.Context, pool *shoal.Pool[T], traces *dialTraces, tr *reqTrace, hop string, attempt int, since time.Time) (shoal.Lease[T], error) {
	if attempt > 0 {
		tr.getConn(hop)
		if tr != nil {
			tr.dialed = false
		}
	}
	w := traces.wait(tr)
	defer traces.done(w)
	if !since.IsZero() {
		return pool.AcquireSince(ctx, since)
	}
	return pool.Acquire(ctx)
}
