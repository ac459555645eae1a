//lint:file-ignore SA1019 x/net/http2 marks its client and server deprecated in favour of net/http's Go 1.26 ClientConn API; shoalhttp needs a ClientConn over a net.Conn that the pool dialled and owns, which only x/net offers.

package shoalhttp

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http/httptrace"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal"
	"golang.org/x/net/http2"
)

// h2Conn is one HTTP/2 connection: an x/net/http2 ClientConn over a pooled
// net.Conn, carrying many requests at once.
type h2Conn struct {
	cc *http2.ClientConn
	nc net.Conn // what the pool dialled, for GotConn
	// readLoopGone is closed when x/net's read loop has ended (see close).
	readLoopGone <-chan struct{}
	info         ConnInfo
	// limit is the stream limit last given to the pool for this connection
	// (the server's SETTINGS_MAX_CONCURRENT_STREAMS, capped).
	limit atomic.Int32
	// peerLimit is the SETTINGS_MAX_CONCURRENT_STREAMS the server sent
	// last (settingsWatch), -1 while it has sent none, and peerLimitNew
	// says that the pool has not been told it yet (followLimit, under
	// limitMu).
	peerLimit    atomic.Int64
	peerLimitNew atomic.Bool
	limitMu      sync.Mutex
	maxStreams   int          // Options.MaxStreamsPerConn; 0 means no cap of ours
	inFlight     atomic.Int64 // streams leased now
	started      atomic.Bool  // a request has been sent (see usable)
	lastDone     atomic.Int64 // monoNow when a stream last ended (see gotConnInfo)
}

// newH2Conn starts HTTP/2 on nc and waits for the server's settings, so
// that the pool learns the connection's real stream limit before it hands
// out a single stream. A PING does it: the server sends its SETTINGS before
// it answers anything, and frames are read in order. A server that allows
// no stream at all (a limit of 0) fails the dial, and one that refused the
// client's certificate fails it with its alert (see h2refusal.go).
func newH2Conn(ctx context.Context, t2 *http2.Transport, origin string, nc net.Conn, maxStreams int) (*h2Conn, error) {
	c := &h2Conn{nc: nc, info: newConnInfo(origin, protoHTTP2, nc), maxStreams: maxStreams}
	c.peerLimit.Store(-1)
	tc := coalesce(nc, c.othersInFlight)
	w := &settingsWatch{onLimit: func(n uint32) {
		c.peerLimit.Store(int64(n))
		c.peerLimitNew.Store(true)
		// A request counts itself in inFlight before followLimit reads
		// peerLimit, and peerLimit is stored before inFlight is read
		// here: a request either sees the new limit or is seen.
		if int64(n) < c.inFlight.Load() && c.leaseWithoutStream() {
			c.stopNewStreams()
		}
	}}
	watchReads(tc, w.scan)
	holdOnWriteError(tc)
	cc, err := t2.NewClientConn(tc)
	if err != nil {
		nc.Close()
		return nil, fmt.Errorf("starting HTTP/2: %w", err)
	}
	c.cc, c.readLoopGone = cc, readLoopGone(tc)
	if err := cc.Ping(ctx); err != nil {
		err = refusalOr(ctx, tc, err)
		c.close()
		return nil, fmt.Errorf("HTTP/2 settings exchange: %w", err)
	}
	closeOnWriteError(tc)
	if c.peerLimitNew.Load() && c.peerLimit.Load() == 0 {
		c.close()
		return nil, errNoStreams
	}
	c.limit.Store(int32(c.streamLimit(cc.State().MaxConcurrentStreams)))
	return c, nil
}

// errNoStreams: a new connection's server allows no concurrent stream.
var errNoStreams = errors.New("HTTP/2 server allows no streams (SETTINGS_MAX_CONCURRENT_STREAMS 0) on a new connection")

// streamLimit turns the server's advertised limit into the pool's: at
// most maxH2Streams and Options.MaxStreamsPerConn. n is 0 only when x/net
// has not seen the server's limit, which means none; a server that
// announces 0 is handled by newH2Conn and followLimit.
func (c *h2Conn) streamLimit(n uint32) int {
	limit := maxH2Streams
	if c.maxStreams > 0 {
		limit = min(limit, c.maxStreams)
	}
	if n != 0 && int64(n) < int64(limit) {
		return int(n)
	}
	return limit
}

// readLoopWait bounds how long close waits for x/net's read loop, which
// ends as soon as it sees its socket closed: it guards against a loop
// stuck elsewhere, never a slow peer, since the socket is closed first.
const readLoopWait = 5 * time.Second

// close closes the connection and waits, at most readLoopWait, for x/net's
// read loop on it to end. ClientConn.Close does not wait for it, and
// Transport.Close promises that none of its goroutines outlives it.
func (c *h2Conn) close() error {
	err := c.cc.Close()
	t := time.NewTimer(readLoopWait)
	defer t.Stop()
	select {
	case <-c.readLoopGone:
	case <-t.C:
	}
	return err
}

// othersInFlight reports whether the connection carries at least four
// requests besides the one being written: then its writes are likely to
// find others to share a system call with (see coalescingConn). With fewer
// the hop to the writer goroutine costs about what it saves, so a few
// workers (4 over the default two connections) always write themselves.
func (c *h2Conn) othersInFlight() bool { return c.inFlight.Load() > 4 }

// settle gives a stream back after a request: the connection is discarded
// when it has closed, retired when it is going away (a GOAWAY from the
// server), and otherwise released, with its stream limit brought in line
// with the server's latest SETTINGS (followLimit).
//
// The check (State) takes the connection's write lock, which a stream's
// writer holds across its socket writes; taking it after every request
// would make releases queue behind other streams' writes. So after a
// success it runs only when the connection's last stream ends, which is
// when a GOAWAY'd connection must be retired to close. A connection that
// turns unusable while others still use it is caught before its next
// request by BeforeAcquire (usable).
func (c *h2Conn) settle(lease shoal.Lease[*h2Conn], ok bool) {
	last := c.inFlight.Add(-1) == 0
	c.lastDone.Store(monoNow())
	c.followLimit(lease)
	if ok && !last {
		lease.Release()
		return
	}
	st := c.cc.State()
	switch {
	case st.Closed:
		lease.Discard()
		return
	case st.Closing:
		lease.Retire()
	}
	lease.Release()
}

// followLimit tells the pool, through lease, the stream limit the server
// last sent, if it has changed since it was last told, and reports whether
// the connection carries no more streams than that limit allows, counting
// the caller's own (already in inFlight). A limit of 0 retires the
// connection: RFC 9113 (section 6.5.2) lets a server set it, for a short
// while, to take no new stream, and the core's limit is at least 1; the
// requests in flight finish and new ones go to another connection, as
// they would to one whose server sent a GOAWAY. Until a SETTINGS frame has
// come it costs a few atomic loads per request.
func (c *h2Conn) followLimit(lease shoal.Lease[*h2Conn]) bool {
	if c.peerLimitNew.Load() && !c.tellLimit(lease) {
		return false
	}
	return c.inFlight.Load() <= c.newestLimit()
}

// tellLimit gives the pool the server's new limit, and reports false when
// it is 0 and the connection has been retired.
func (c *h2Conn) tellLimit(lease shoal.Lease[*h2Conn]) bool {
	c.limitMu.Lock()
	defer c.limitMu.Unlock()
	if c.peerLimitNew.Swap(false) {
		n := c.peerLimit.Load()
		if n == 0 {
			lease.Retire()
			return false
		}
		if l := int32(c.streamLimit(uint32(n))); l != c.limit.Load() {
			c.limit.Store(l)
			lease.SetStreamLimit(int(l))
		}
	}
	return true
}

// newestLimit is the stream limit by the server's latest SETTINGS as it
// was read, which the pool may not have been told yet: another request
// may be telling it, and the pool handed the caller its stream by the
// limit before.
func (c *h2Conn) newestLimit() int64 {
	switch n := c.peerLimit.Load(); {
	case n < 0:
		return int64(c.limit.Load())
	case n == 0:
		return 0
	default:
		return int64(c.streamLimit(uint32(n)))
	}
}

// leaseWithoutStream reports whether a request holds a lease on the
// connection but has no stream in x/net yet: one that passed followLimit
// by the limit before a SETTINGS frame lowered it, which x/net may keep
// waiting for a stream. It runs, from the read loop, only when the new
// limit is below the streams leased. A stream that has ended in x/net
// while its lease is not yet given back counts as such a request, which
// errs towards retiring the connection; a reset stream x/net still counts
// against the limit (until the server answers the PING sent with the
// reset) can hide one that has not reached x/net's wait yet.
func (c *h2Conn) leaseWithoutStream() bool {
	st := c.cc.State()
	return st.StreamsPending > 0 || c.inFlight.Load() > int64(st.StreamsActive)
}

// stopNewStreams has x/net take no new stream on the connection, from its
// read loop, as the server's SETTINGS lower the limit below the streams
// leased on it while a request leased there has no stream yet
// (leaseWithoutStream). That request, having passed followLimit just
// before the frame came, would otherwise wait inside x/net
// (StrictMaxConcurrentStreams) until a stream ends, which may be never (a
// long poll, or a limit of 0). When every lease has its stream, nothing
// waits there: the connection serves on, its streams finish, and the pool,
// told the new limit by the next followLimit, hands out no more than it.
// Shutdown is the one way to wake such a request: it fails as "client conn
// not usable", which is retried on another connection (h2CanRetry), while
// the streams in flight finish and the connection is retired as they end
// (settle). Shutdown also sends the server a GOAWAY; its context, already
// ended, has it return without waiting for the streams.
func (c *h2Conn) stopNewStreams() {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_ = c.cc.Shutdown(ctx) // a failed write fails the connection anyway
}

// usable reports whether the connection can take a new request: it is not
// closed and has had no GOAWAY. It runs before every request, so it asks
// CanTakeNewRequest, which takes only the connection's state lock; State
// also takes the write lock, which a stream's writer holds across its
// socket writes, and would queue every acquire behind other streams'
// writes. With StrictMaxConcurrentStreams set, CanTakeNewRequest ignores
// the stream count and says whether the connection is usable, except that
// it says yes to a closed connection that has never sent a request (so
// that the error shows); until the first request is under way, State
// tells.
func (c *h2Conn) usable() bool {
	if !c.cc.CanTakeNewRequest() {
		return false
	}
	if c.started.Load() {
		return true
	}
	st := c.cc.State()
	return !st.Closed && !st.Closing
}

// gotConnInfo describes c to the GotConn of a request that just took one
// of its streams, with x/net's meaning: reused once a request has been
// sent on it, idle when reused and no stream is open on the wire (a
// response whose body has all arrived but is still being read does not
// count), idle since the last stream ended. State takes the connection's
// write lock, so this runs only for a request whose trace has GotConn.
// (x/net's State reports the time the connection went idle only when it
// has an idle timeout, which the pool's connections do not.)
func (c *h2Conn) gotConnInfo() httptrace.GotConnInfo {
	info := httptrace.GotConnInfo{Conn: c.nc, Reused: c.started.Load()}
	if info.Reused && c.cc.State().StreamsActive == 0 {
		info.WasIdle = true
		info.IdleTime = idleSince(c.lastDone.Load())
	}
	return info
}

// markStarted records that a request is under way on the connection (see
// usable).
func (c *h2Conn) markStarted() {
	if !c.started.Load() {
		c.started.Store(true)
	}
}

// connInfo describes c to OnConnect and OnDisconnect.
func (c *h2Conn) connInfo() ConnInfo { return c.info }
