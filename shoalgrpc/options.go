package shoalgrpc

import (
	"fmt"
	"log/slog"
	"math"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/setting"
	"google.golang.org/grpc"
)

// Options configures a Pool. The zero value is ready to use. Every field
// follows the convention of shoal.Config: zero means the default written
// beside it, and a negative value means off (no limit, no bound) where off
// makes sense and is an error where it does not (MaxConns, MaxStreams,
// MaxDialing).
type Options struct {
	// Name names the pool in its logs (a "pool" attribute on every line),
	// errors, Stats, metrics and on the live page. Empty means the target,
	// with any credentials in it removed.
	Name string

	// MaxConns is the most grpc.ClientConns open at once, counting those
	// being connected. Default 16. With MaxStreams 100 that is 1,600
	// concurrent calls before callers wait.
	MaxConns int

	// MinConns connections are kept open, carrying calls or not, opened
	// in the background and replaced when one closes. Default 0; negative:
	// none. Idle reaping never goes below it. Must not exceed MaxConns.
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
	// the last one ends. Default no limit (0 and negative alike), unlike
	// shoalhttp's 10 minutes: a draining connection counts against
	// MaxConns until its last stream ends, and gRPC streams (watches,
	// subscriptions) may last for hours. Set it behind a TCP load balancer,
	// so that calls spread over backends added later.
	MaxLifetime time.Duration

	// LifetimeJitter spreads lifetimes so that connections opened together
	// do not drain together: each connection's lifetime is drawn uniformly
	// from [MaxLifetime, MaxLifetime+LifetimeJitter], as shoal.Config
	// draws it. Default MaxLifetime/10, as in shoalhttp; negative: none.
	// Setting it without MaxLifetime is an error.
	LifetimeJitter time.Duration

	// MaxIdleTime closes a connection that has carried no call for this
	// long, never going below MinConns, so the extra connections a burst
	// opened go away once it is over. With MinConns 0 (the default) that
	// includes the last one, and the first call after five quiet minutes
	// waits for a new connection; set MinConns to 1 to keep one ready (and
	// pass grpc.WithIdleTimeout(0), or grpc-go disconnects it after its own
	// idle timeout; see the package doc).
	// Default 5 minutes; a negative value means no limit.
	MaxIdleTime time.Duration

	// DialTimeout bounds how long a new connection may take to become
	// READY. Default 20s, grpc-go's own minimum connect timeout. A
	// connection that reaches TRANSIENT_FAILURE first fails at once, and
	// callers waiting for it get the error instead of sitting until their
	// deadline. A negative value means no bound but the caller's deadline
	// and grpc-go's own.
	DialTimeout time.Duration

	// MaxDialing bounds the connections being opened at once. Default
	// MaxConns, as SetMaxConns leaves it: opening a gRPC connection is a TCP and HTTP/2 handshake, and
	// when a burst of calls finds every connection full it needs all the
	// new ones now (1,000 watches on a 100-stream server need 10). After a
	// failed dial the pool backs off before dialling again, so a server
	// that is down sees no storm either way. A negative value is an error.
	MaxDialing int

	// MaxWaiters bounds the callers waiting for a free stream when every
	// connection is full; past it a call fails at once with
	// codes.ResourceExhausted. 0 (the default) or negative: no bound.
	MaxWaiters int

	// IgnoreServerStreamLimit turns off reading the server's advertised
	// stream limit. Reading it needs a grpc.WithContextDialer installed by
	// the pool, which it does only when no dial option of the caller
	// replaces it; it is skipped on its own when HTTPS_PROXY or https_proxy
	// is set, because grpc-go does not use a proxy when a context dialer is
	// installed. Set this to keep grpc-go's own dialer regardless: over
	// TLS, where the limit cannot be read, so that grpc-go sets
	// TCP_USER_TIMEOUT from grpc.WithKeepaliveParams (see the package doc).
	IgnoreServerStreamLimit bool

	// Logger receives connection opens, closes and dial failures, each
	// line with a "pool" attribute (Name). nil means slog.Default(), as in
	// shoal.Config: slog.New(slog.DiscardHandler) silences the pool.
	// Nothing is logged per call.
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
	// Logger, Observer and Stats().Leaked. 0 (the default) or negative:
	// off.
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

// check refuses the negative values that have no "off" to mean, with the
// default in the message (the core's would name its own defaults), and a
// jitter with no lifetime to spread, which withDefaults would drop.
func (o Options) check() error {
	bad := func(field string, got, zero any) error {
		return &shoal.ConfigError{Struct: "shoalgrpc.Options", Field: field,
			Reason: fmt.Sprintf("must be >= 0 (0 means %v), got %v", zero, got)}
	}
	switch {
	case o.MaxConns < 0:
		return bad("MaxConns", o.MaxConns, defaultMaxConns)
	case o.MaxStreams < 0:
		return bad("MaxStreams", o.MaxStreams, defaultMaxStreams)
	case o.MaxDialing < 0:
		return bad("MaxDialing", o.MaxDialing, "MaxConns")
	case o.LifetimeJitter > 0 && o.MaxLifetime <= 0:
		return &shoal.ConfigError{Struct: "shoalgrpc.Options", Field: "LifetimeJitter",
			Reason: "is set but MaxLifetime is not; set MaxLifetime to give connections a lifetime to spread"}
	}
	return nil
}

// withDefaults returns o with every zero field that has a default filled in.
func (o Options) withDefaults() Options {
	if o.MaxConns == 0 {
		o.MaxConns = defaultMaxConns
	}
	if o.MaxStreams == 0 {
		o.MaxStreams = defaultMaxStreams
	}
	if o.MaxDialing == 0 {
		// MaxConns, the pool's now and after any SetMaxConns: every dial
		// holds a place under MaxConns in the core, so no bound of its
		// own leaves MaxConns as the bound.
		o.MaxDialing = math.MaxInt32
	}
	if o.DialTimeout == 0 {
		o.DialTimeout = defaultDialTimeout
	}
	switch {
	case o.MaxLifetime <= 0:
		o.MaxLifetime, o.LifetimeJitter = 0, 0
	case o.LifetimeJitter == 0:
		o.LifetimeJitter = o.MaxLifetime / 10
	case o.LifetimeJitter < 0:
		o.LifetimeJitter = 0
	}
	o.MaxIdleTime = setting.Or(o.MaxIdleTime, defaultMaxIdleTime)
	return o
}
