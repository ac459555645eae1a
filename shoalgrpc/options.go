package shoalgrpc

import (
	"log/slog"
	"time"

	"github.com/shoalpool/shoal"
	"google.golang.org/grpc"
)

// Options configures a Pool. The zero value is ready to use: every field's
// zero means the default written beside it.
type Options struct {
	// MaxConns is the most grpc.ClientConns open at once, counting those
	// being connected. Default 16. With MaxStreams 100 that is 1,600
	// concurrent calls before callers wait.
	MaxConns int

	// MinConns connections are kept open, carrying calls or not, opened
	// in the background and replaced when one closes. Default 0. Idle
	// reaping never goes below it. Must not exceed MaxConns.
	MinConns int

	// MaxStreams is how many calls one connection carries at once. Default
	// 100, the limit most servers set. When the server advertises a lower
	// limit and the pool can read it (see IgnoreServerStreamLimit; never
	// over TLS), each connection uses the lower one; the pool never goes
	// above MaxStreams. Over TLS, set it to the server's limit: above it,
	// calls past the limit wait inside grpc-go on one connection instead of
	// going to another.
	MaxStreams int

	// MaxLifetime is how long a connection takes new calls. After it, the
	// connection drains: calls in flight finish normally and it closes when
	// the last one ends. 0 means no limit.
	MaxLifetime time.Duration

	// LifetimeJitter spreads lifetimes so that connections opened together
	// do not drain together: each connection's lifetime is drawn uniformly
	// from [MaxLifetime-LifetimeJitter, MaxLifetime]. Must not exceed
	// MaxLifetime. Default 0.
	LifetimeJitter time.Duration

	// MaxIdleTime closes a connection that has carried no call for this
	// long, never going below MinConns, so the extra connections a burst
	// opened go away once it is over. With MinConns 0 (the default) that
	// includes the last one, and the first call after five quiet minutes
	// waits for a new connection; set MinConns to 1 to keep one ready (and
	// pass grpc.WithIdleTimeout(0), or grpc-go disconnects it after its own
	// idle timeout; see the package doc).
	// Default 5 minutes; a negative value means never.
	MaxIdleTime time.Duration

	// DialTimeout bounds how long a new connection may take to become
	// READY. Default 20s, grpc-go's own minimum connect timeout. A
	// connection that reaches TRANSIENT_FAILURE first fails at once, and
	// callers waiting for it get the error instead of sitting until their
	// deadline.
	DialTimeout time.Duration

	// MaxDialing bounds the connections being opened at once. Default
	// MaxConns: opening a gRPC connection is a TCP and HTTP/2 handshake, and
	// when a burst of calls finds every connection full it needs all the
	// new ones now (1,000 watches on a 100-stream server need 10). After a
	// failed dial the pool backs off before dialling again, so a server
	// that is down sees no storm either way.
	MaxDialing int

	// MaxWaiters bounds the callers waiting for a free stream when every
	// connection is full; past it a call fails at once with
	// codes.ResourceExhausted. 0 means no bound.
	MaxWaiters int

	// IgnoreServerStreamLimit turns off reading the server's advertised
	// stream limit. Reading it needs a grpc.WithContextDialer installed by
	// the pool, which it does only when no dial option of the caller
	// replaces it; it is skipped on its own when HTTPS_PROXY or https_proxy
	// is set, because grpc-go does not use a proxy when a context dialer is
	// installed. Set this to keep grpc-go's own dialer regardless.
	IgnoreServerStreamLimit bool

	// Logger receives connection opens, closes and dial failures. nil means
	// no logging. Nothing is logged per call.
	Logger *slog.Logger

	// Observer is told of every call's wait for a stream slot, every slot
	// release, dial, close, rejection, timeout and leak: pass a shoalprom
	// or shoalotel pool's metrics here. nil costs nothing.
	Observer shoal.Observer

	// Budget, when set, is a limit on connections this pool shares with
	// pools elsewhere (see shoal.Budget and shoaletcd). gRPC has no fence
	// at the server: see shoaletcd's package doc for how long a paused
	// process can count a slot twice.
	Budget shoal.Budget

	// LeakThreshold reports a stream slot held longer than this (a stream
	// its caller forgot), once, with the stack that opened it, through
	// Logger, Observer and Stats().Leaked. 0 turns it off.
	LeakThreshold time.Duration

	// UnaryInterceptors run once around every unary call made through the
	// pool, the first outermost, as grpc.WithChainUnaryInterceptor's do:
	// around the wait for a stream slot and the call, so that they see the
	// calls the pool itself fails (a deadline that ends while waiting, a
	// server that is down) as well as grpc-go's answers. Their cc argument
	// is nil, since the pool picks the connection inside the chain; an
	// interceptor that needs one should keep the Pool. Interceptors given
	// to NewClient as grpc.DialOptions run inside this chain: on the
	// connection that carries the call, or, for a call the pool fails, on
	// the pool's failure channel (see the package doc), which fails it
	// again on every try. An interceptor that retries belongs here, where
	// a retry asks the pool again.
	UnaryInterceptors []grpc.UnaryClientInterceptor

	// StreamInterceptors do the same for streams (NewStream).
	StreamInterceptors []grpc.StreamClientInterceptor
}

// Defaults for Options fields left at zero.
const (
	defaultMaxConns    = 16
	defaultMaxStreams  = 100
	defaultDialTimeout = 20 * time.Second
	defaultMaxIdleTime = 5 * time.Minute
)

// withDefaults returns o with every zero field that has a default filled in.
func (o Options) withDefaults() Options {
	if o.MaxConns == 0 {
		o.MaxConns = defaultMaxConns
	}
	if o.MaxStreams == 0 {
		o.MaxStreams = defaultMaxStreams
	}
	if o.MaxDialing == 0 {
		o.MaxDialing = o.MaxConns
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = defaultDialTimeout
	}
	switch {
	case o.MaxIdleTime == 0:
		o.MaxIdleTime = defaultMaxIdleTime
	case o.MaxIdleTime < 0:
		o.MaxIdleTime = 0
	}
	return o
}
