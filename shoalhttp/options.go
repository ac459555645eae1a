package shoalhttp

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/namemask"
	"github.com/shoalpool/shoal/internal/setting"
)

// Options configures a Transport. Limits apply per origin unless a field
// says otherwise. Every field follows the convention of shoal.Config: zero
// means the default written beside it, so Options{} is a good choice for
// most programs, and a negative value means off (no limit, no wait) where
// off makes sense and is an error where it does not.
type Options struct {
	// Name names the Transport's pools, one per origin, in their logs,
	// errors, Stats, metrics and on the live page: an origin's pool is
	// called Name followed by the origin, "payments https://api.example.com:443".
	// Empty means the origin alone.
	Name string

	// MaxConns is the most connections open to one origin at once,
	// counting those being dialled. Default 64. With HTTP/2 each
	// connection carries many requests, so 64 connections go a long way.
	// A negative value is an error.
	MaxConns int

	// MinIdle connections per origin are kept open and idle in the
	// background once the origin has been used or warmed. Default 0;
	// negative: none. For
	// an HTTP/2 origin, where the least-loaded connection takes the next
	// request and so never stays idle, it counts as MinConns: the pool
	// keeps max(MinIdle, MinConns) connections open, busy or idle.
	MinIdle int

	// MinConns connections per origin are kept open, busy or idle, once
	// the origin has been used or warmed; one that closes (lifetime,
	// GOAWAY, a broken connection) is replaced in the background. For an
	// HTTP/1.1 origin the default is 0. For an HTTP/2 origin it is 2, and
	// requests spread over them (the least-loaded connection takes the
	// next one): one HTTP/2 connection is a serial point at both ends,
	// where one goroutine reads all of its frames, and two let a 2-core
	// client and server work on two requests' frames at once. A negative
	// value means 0 for both protocols. Either protocol keeps MinConns
	// (and MinIdle) only up to the origin's MaxConns as
	// Transport.SetMaxConns leaves it, and in full again once the limit
	// allows: an HTTP/2 origin held to one connection keeps one, and two
	// once SetMaxConns raises its limit.
	MinConns int

	// Partitions splits an origin's idle HTTP/1.1 connections into this
	// many lock-free stacks to cut contention between cores. 0 lets the
	// pool choose (GOMAXPROCS, at most MaxConns, at most 16); a negative
	// value is an error.
	Partitions int

	// MaxWaiters bounds the requests waiting for a connection to one
	// origin; past the bound RoundTrip fails at once with an error that
	// matches shoal.ErrExhausted. 0 (the default) or negative: no bound.
	MaxWaiters int

	// BargeWindow is how long the oldest request waiting for an HTTP/1.1
	// connection (all MaxConns busy) may be passed over by requests
	// arriving after it: while it has waited less, a connection whose
	// response was read goes to whoever asks next, usually the goroutine
	// that just released it coming back with its next request, without a
	// wake-up (see shoal.Config.BargeWindow, also for how the window
	// stretches when more than 8 requests wait per connection). After that,
	// released connections go to the waiting requests in order. Default 4ms, as in
	// shoalpgx; a negative value means strict first-come, first-served
	// hand-off. It pays where requests outnumber connections (figures in
	// BENCHMARKS.md, "Barging"). It has no effect on HTTP/2, whose
	// connections are shared.
	BargeWindow time.Duration

	// MaxLifetime closes a connection once it is this old (after its
	// in-flight request), so that clients behind a load balancer spread
	// over backends that were added later. Default 10 minutes; a negative
	// value means no limit.
	MaxLifetime time.Duration

	// LifetimeJitter spreads lifetimes so that connections opened together
	// do not all close together: each connection's lifetime is drawn from
	// [MaxLifetime, MaxLifetime+LifetimeJitter], as shoal.Config draws it.
	// Default MaxLifetime/10; a negative value means no jitter. Setting it
	// with MaxLifetime off (negative) is an error.
	LifetimeJitter time.Duration

	// MaxIdleTime closes a connection idle this long (never going below
	// MinIdle or MinConns). Default 90 seconds, as http.DefaultTransport's
	// IdleConnTimeout; a negative value means no limit.
	MaxIdleTime time.Duration

	// DialTimeout bounds the TCP connect. 0 means 30 seconds; a negative
	// value means no bound but the operating system's and the request's.
	DialTimeout time.Duration

	// TLSHandshakeTimeout bounds the TLS handshake (and, for HTTP/2, the
	// exchange of settings that follows it). 0 means 10 seconds; a
	// negative value means no bound but the request's.
	TLSHandshakeTimeout time.Duration

	// ExpectContinueTimeout is how long an HTTP/1.1 request with
	// "Expect: 100-continue" and a body waits for the server's 100
	// Continue (or its final answer) before it sends the body anyway, as
	// http.Transport.ExpectContinueTimeout. 0 means 1 second, as
	// http.DefaultTransport has; a negative value means no wait (the body
	// follows the head at once, as with a zero http.Transport). A final
	// answer that closes the connection means the body is not sent. Over
	// HTTP/2 the body is sent at once.
	ExpectContinueTimeout time.Duration

	// MaxResponseHeaderBytes bounds a response's head, as
	// http.Transport.MaxResponseHeaderBytes does: over HTTP/1.1 the status
	// line, header and any 1xx answers before it, past which the request
	// fails and the connection is closed; over HTTP/2 the header list as
	// the protocol counts it (each field's name and value plus 32 bytes),
	// advertised to the server and enforced by x/net, which fails the
	// request (a field longer than the bound ends the connection). 0
	// means 10 MiB, net/http's default; a negative value is an error (a
	// response head without a bound is a way to run out of memory).
	MaxResponseHeaderBytes int64

	// TLSClientConfig is the TLS configuration for https origins. nil means
	// the zero tls.Config. It is cloned; its ServerName (when empty) and
	// NextProtos are set per origin.
	TLSClientConfig *tls.Config

	// DisableHTTP2 keeps every origin on HTTP/1.1: ALPN offers only
	// "http/1.1".
	DisableHTTP2 bool

	// H2CPriorKnowledge makes plain-http origins speak HTTP/2 without TLS
	// (h2c) from the first byte, as for a gRPC-style server known to
	// support it. It has no effect on https origins.
	H2CPriorKnowledge bool

	// MaxStreamsPerConn caps the requests one HTTP/2 connection carries at
	// once below the server's SETTINGS_MAX_CONCURRENT_STREAMS, so that load
	// spreads over more connections sooner: useful behind a TCP load
	// balancer, where each connection lands on one backend. Against a single
	// server it costs throughput (fewer frames per write). 0 (the default)
	// or negative means no cap of ours: the server's limit (at most 1000).
	// It has no effect on HTTP/1.1.
	MaxStreamsPerConn int

	// DisableCompression stops the Transport from asking for gzip and
	// decompressing the response transparently (HTTP/1.1 and HTTP/2), as
	// http.Transport.DisableCompression does.
	DisableCompression bool

	// Proxy returns the proxy a request goes through, with
	// http.Transport.Proxy's meaning: a nil URL (and nil error) sends it
	// straight to its origin, an error fails it. nil means the
	// environment's settings (HTTP_PROXY, HTTPS_PROXY, NO_PROXY and their
	// lower-case forms), as http.DefaultTransport's
	// http.ProxyFromEnvironment: they are read when NewTransport runs, and
	// loopback hosts ("localhost", 127.0.0.1, ::1) always go direct. Set it
	// to NoProxy to ignore the environment, as an http.Transport with a
	// nil Proxy does.
	//
	// http and https proxy URLs are supported. A plain-http origin's
	// requests are sent to the proxy in absolute form (over HTTP/1.1, even
	// with H2CPriorKnowledge); an https origin is reached through a CONNECT
	// tunnel, with TLS (and HTTP/2, when ALPN picks it) end to end through
	// it. The URL's userinfo becomes the Proxy-Authorization header (Basic)
	// on the requests or the CONNECT; it is never logged or put in an
	// error. Each (origin, proxy, credentials) has its own pool: connections
	// through different proxies are never mixed. Proxy runs once per
	// request, so it should be cheap.
	Proxy func(*http.Request) (*url.URL, error)

	// DialContext opens the TCP connection (to the proxy, when there is
	// one). nil means a net.Dialer with DialTimeout and a 30-second
	// keep-alive. The address is host:port.
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)

	// OnConnect, when set, is called after a connection is established
	// (TCP connected, TLS and protocol negotiated). It must not block.
	OnConnect func(ConnInfo)

	// OnDisconnect, when set, is called when the pool closes a connection,
	// with why. It must not block.
	OnDisconnect func(ConnInfo, shoal.Reason)

	// WarmOrigins are origins ("https://host" or "http://host:port") that
	// NewTransport starts connecting to in the background, max(MinIdle,
	// MinConns, 1) connections each, so the first requests find a
	// connection ready. Use Transport.Warm to wait for warm-up instead.
	WarmOrigins []string

	// Logger receives connection opens and closes (Debug) and dial failures
	// (Warn), each with "pool" (see Name) and "origin" attributes; never a
	// URL path, a query or a header. nil means slog.Default(), as in
	// shoal.Config: slog.New(slog.DiscardHandler) silences the Transport.
	Logger *slog.Logger

	// Observer, when set, gives the observer (metrics) of an origin's pool,
	// origin being "scheme://host:port" as in Stats. It is called for each
	// pool made for an origin, which can be more than once
	// (CloseIdleConnections replaces an origin's pools), and for each
	// failed dial of an origin's first connection, which learns the
	// protocol before the pool is made (told to it as ObserveDial): return
	// the same observer for the same origin, such as one shoalprom or
	// shoalotel PoolMetrics per origin, and the pools' numbers add up
	// under one name.
	Observer func(origin string) shoal.Observer

	// Budget, when set, gives the connection budget an origin's pool
	// shares with pools elsewhere (see shoal.Budget and shoaletcd), origin
	// being "scheme://host:port"; nil for an origin means no budget. As
	// with Observer it is called for each pool made for the origin: return
	// the same budget for the same origin. HTTP has no fence at the server:
	// see shoaletcd's package doc for how long a paused process can count
	// a slot twice.
	Budget func(origin string) shoal.Budget

	// MaxConnsTotal caps the connections the Transport holds to all
	// origins together, those being dialled or closed included; 0 (the
	// default) or negative means no cap (MaxConns still bounds each
	// origin). The origins' pools share
	// it as the pools of a shoal.LocalBudget (Transport.Budget): each
	// origin's MinConns, as set here, first (the HTTP/2 default is not
	// claimed), the rest max-min fair by demand, an origin whose demand
	// fell giving its part back after 2s, and an idle origin's connections
	// closing for a busy one's at once. An origin's first connection,
	// dialled before its pool exists to learn its protocol, waits for a
	// permit too, then counts as its origin's. The origins' MinConns
	// must fit together: a request to an origin whose MinConns would
	// bring those of the origins open above MaxConnsTotal fails at once,
	// with an error naming both. Not with Budget.
	MaxConnsTotal int

	// LeakThreshold reports a request whose connection (HTTP/1.1) or
	// stream (HTTP/2) has been held longer than this, once, with the stack
	// of the code that sent it, through Logger (Warn), Observer and the
	// origin's Stats().Leaked. A request holds its connection until its
	// response body is read to the end or closed, so this finds the
	// response bodies a program forgot to close. Set it above the longest
	// download or stream you mean to read. 0 (the default) or negative:
	// off.
	LeakThreshold time.Duration
}

// Defaults for fields whose zero value means "choose for me".
const (
	defaultMaxConns            = 64
	defaultMaxLifetime         = 10 * time.Minute
	defaultMaxIdleTime         = 90 * time.Second
	defaultDialTimeout         = 30 * time.Second
	defaultTLSHandshakeTimeout = 10 * time.Second
	defaultKeepAlive           = 30 * time.Second
	defaultBargeWindow         = 4 * time.Millisecond // see Options.BargeWindow
	// defaultMaxResponseHeaderBytes is net/http's bound on a response head.
	defaultMaxResponseHeaderBytes = 10 << 20
	// maxH2Streams caps the streams per HTTP/2 connection when a server
	// advertises more (or no limit at all): x/net's own default.
	maxH2Streams = 1000
)

// defaultH2MinConns is MinConns's default for HTTP/2 origins.
const defaultH2MinConns = 2

// h2MinConns is the MinConns an HTTP/2 origin's pool keeps, defaults
// applied. The pool keeps it only up to its limit, and is made with a
// MaxConns that holds it (originPool.open), so that the default comes
// back in full once SetMaxConns raises a limit below it.
func (o Options) h2MinConns() int {
	switch {
	case o.MinConns < 0:
		return 0
	case o.MinConns == 0:
		return defaultH2MinConns
	}
	return o.MinConns
}

// withDefaults returns o with every zero field set to its default and every
// "negative means off" field set to the core's zero. MinConns keeps its
// zero and negative values: their meaning depends on the protocol (see
// h2MinConns).
func (o Options) withDefaults() Options {
	o.Name = namemask.Mask(o.Name) // once, for every name built from it (poolName)
	if o.MaxConns == 0 {
		o.MaxConns = defaultMaxConns
	}
	switch {
	case o.MaxLifetime == 0:
		o.MaxLifetime = defaultMaxLifetime
	case o.MaxLifetime < 0:
		o.MaxLifetime, o.LifetimeJitter = 0, 0
	}
	switch {
	case o.LifetimeJitter == 0:
		o.LifetimeJitter = o.MaxLifetime / 10
	case o.LifetimeJitter < 0:
		o.LifetimeJitter = 0
	}
	o.MaxIdleTime = setting.Or(o.MaxIdleTime, defaultMaxIdleTime)
	o.BargeWindow = setting.Or(o.BargeWindow, defaultBargeWindow)
	o.DialTimeout = setting.Or(o.DialTimeout, defaultDialTimeout)                         // negative: net.Dialer's "no timeout"
	o.TLSHandshakeTimeout = setting.Or(o.TLSHandshakeTimeout, defaultTLSHandshakeTimeout) // negative: no bound, see dialer.handshake
	o.MaxStreamsPerConn = max(o.MaxStreamsPerConn, 0)
	if o.Logger == nil {
		o.Logger = slog.Default()
	}
	if o.ExpectContinueTimeout == 0 {
		o.ExpectContinueTimeout = defaultExpectContinueTimeout
	}
	if o.MaxResponseHeaderBytes == 0 {
		o.MaxResponseHeaderBytes = defaultMaxResponseHeaderBytes
	}
	return o
}

// validate checks the options that the core does not see and then lets the
// core check the pool configuration (Config.Validate), so that a bad value
// fails NewTransport instead of the first request. Errors are
// *shoal.ConfigError, naming the Options field.
func (o Options) validate() error {
	bad := func(field, reason string) error {
		return &shoal.ConfigError{Struct: "shoalhttp.Options", Field: field, Reason: reason}
	}
	if o.MaxConns < 0 {
		return bad("MaxConns", fmt.Sprintf("must be >= 0 (0 means %d), got %d", defaultMaxConns, o.MaxConns))
	}
	if o.MaxLifetime < 0 && o.LifetimeJitter > 0 {
		return bad("LifetimeJitter", "is set but MaxLifetime is off (negative); give connections a lifetime to spread, or leave LifetimeJitter 0")
	}
	if o.MaxConnsTotal > 0 && o.Budget != nil {
		return bad("MaxConnsTotal", "set with Budget: give each origin a Budget, or the Transport a cap, not both")
	}
	if o.MaxConnsTotal > 0 && o.MinConns > 0 && o.MinConns > o.MaxConnsTotal {
		return bad("MinConns", fmt.Sprintf("%d is above MaxConnsTotal %d: no origin could be granted its minimum", o.MinConns, o.MaxConnsTotal))
	}
	if o.MaxResponseHeaderBytes < 0 {
		return bad("MaxResponseHeaderBytes", fmt.Sprintf("must be >= 0 (0 means %d), got %d", defaultMaxResponseHeaderBytes, o.MaxResponseHeaderBytes))
	}
	for i, raw := range o.WarmOrigins {
		if _, err := parseOrigin(raw); err != nil {
			// The entry is named by its index: it may hold a password.
			return bad(fmt.Sprintf("WarmOrigins[%d]", i), err.Error())
		}
	}
	d := o.withDefaults()
	// Only the fields: no origin's metrics or budget should hear of this.
	d.Observer, d.Budget = nil, nil
	cfg := poolConfig[struct{}](d, "validate", func(context.Context) (struct{}, error) { return struct{}{}, nil }, nil)
	// HTTP/1.1's pools add BargeWindow (h1backend.go): checked here too, so
	// that a bad one fails NewTransport, not every request to such an origin.
	cfg.BargeWindow = d.BargeWindow
	if err := cfg.Validate(); err != nil {
		var ce *shoal.ConfigError
		if errors.As(err, &ce) {
			return bad(ce.Field, ce.Reason)
		}
		return err
	}
	return nil
}
