package shoal

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"time"
)

// Config describes a pool. Dial and MaxConns are required; every other field
// has a working zero value. New checks the whole Config and names the first
// field that is wrong.
type Config[T any] struct {
	// Dial opens a connection. Required. It runs in a background goroutine
	// under a context that ends when the pool is closed or DialTimeout
	// passes, so a caller who gives up waiting does not waste the dial: the
	// connection goes to the next waiter or stays idle.
	Dial func(ctx context.Context) (T, error)

	// Close closes a connection. Optional; when nil the pool simply drops it.
	// A panic or an error from Close is logged and otherwise ignored: the
	// connection counts as closed either way.
	Close func(conn T) error

	// MaxConns is the most connections open at once, counting those being
	// dialled. Required, > 0.
	MaxConns int

	// MinIdle connections are kept open and idle by the background
	// maintenance goroutine (never more than MaxConns in all). Default 0.
	// Idle reaping never takes the pool below MinIdle.
	MinIdle int

	// MinConns connections are kept open, busy or idle, by the background
	// maintenance goroutine: it dials when fewer are open or being
	// dialled, as after a lifetime expiry or a broken connection, and idle
	// reaping never takes the pool below it. Default 0. It is the floor
	// that suits multiplexed connections, where MinIdle counts only those
	// carrying no stream at all: a MinConns of 2 keeps two connections to
	// spread leases over even while both are busy. Warm waits for
	// max(MinIdle, MinConns).
	MinConns int

	// MaxStreams is how many leases one connection serves at once: 0 or 1
	// means exclusive connections (database sessions), more means
	// multiplexed ones (HTTP/2, gRPC). In multiplexed mode a new lease goes
	// to the least-loaded connection and a new connection is dialled only
	// when every open one is full.
	MaxStreams int

	// Partitions splits the idle exclusive connections into this many
	// lock-free stacks to cut contention between cores. 0 lets the pool
	// choose (GOMAXPROCS, at most MaxConns, at most 16); 1 is a single
	// partition. An acquire always steals from other partitions before it
	// dials or waits. Ignored in multiplexed mode.
	Partitions int

	// MaxWaiters bounds the callers waiting in Acquire. 0 means unlimited;
	// past the bound Acquire fails at once with ErrExhausted.
	MaxWaiters int

	// HandoffAfter trades a bounded amount of fairness for throughput when
	// callers outnumber connections. 0 (the default) is strict FIFO: a
	// release with callers waiting hands its connection straight to the
	// oldest of them, which costs a goroutine wake-up per release. With
	// HandoffAfter set, while the oldest waiter has waited less than
	// HandoffAfter a release puts its connection back on the idle stacks
	// instead, where the next Acquire (often the releasing goroutine's own,
	// coming straight back) takes it without waking anyone; once the
	// oldest waiter has waited HandoffAfter, releases go to the oldest
	// waiter again, in order. So a waiter can be passed over only during
	// its first HandoffAfter of waiting; when more than 8 callers wait per
	// open connection that window stretches in proportion, up to 4 times
	// HandoffAfter, so that serving the crowd in time does not turn every
	// other release into a hand-off. A connection left idle while
	// someone waits is handed over within 200µs (HandoffAfter, if shorter;
	// up to a millisecond on an otherwise idle process, whose timers fire
	// late); when that happens, its releaser did not come back, and
	// barging is suspended for 100ms. Where leases are held across network
	// round trips and callers outnumber connections it pays: shoalpgx and
	// shoalhttp (HTTP/1.1) set 4ms by default (see barge.go for the
	// figures). Exclusive connections only: setting it with MaxStreams > 1
	// is an error.
	HandoffAfter time.Duration

	// QueueTarget turns on load shedding in the style of DBConnection: when
	// every acquire during a QueueInterval waited longer than QueueTarget,
	// the pool counts as overloaded and, until an interval passes in which
	// some acquire waited less, fails waiters that have waited 2*QueueTarget
	// with ErrExhausted instead of letting the queue grow without end.
	// 0 turns shedding off.
	QueueTarget time.Duration

	// QueueInterval is the window over which QueueTarget is judged.
	// Default 1s when QueueTarget is set; setting it without QueueTarget is
	// an error.
	QueueInterval time.Duration

	// MaxLifetime closes a connection once it is this old: at release, when
	// found idle, or when next acquired. 0 means no limit.
	MaxLifetime time.Duration

	// LifetimeJitter spreads the lifetimes so that connections opened
	// together do not all close together: each connection's own lifetime is
	// drawn uniformly from [MaxLifetime-LifetimeJitter, MaxLifetime].
	// Must not exceed MaxLifetime.
	LifetimeJitter time.Duration

	// MaxIdleTime closes a connection that has been idle this long, never
	// taking the pool below MinIdle. 0 means no limit.
	MaxIdleTime time.Duration

	// HealthCheck, when set, is called on Acquire for a connection that has
	// been idle at least HealthCheckAfter; IdleFor(ctx) says how long. An
	// error closes the connection (ReasonHealth) and the acquire moves on
	// to another one.
	HealthCheck func(ctx context.Context, conn T) error

	// HealthCheckAfter is the idleness after which HealthCheck runs.
	// 0 means 1s. Ignored when HealthCheck is nil.
	HealthCheckAfter time.Duration

	// DialTimeout bounds each dial. 0 means no bound beyond Dial's own and
	// the pool's life.
	DialTimeout time.Duration

	// MaxDialing bounds the dials in flight at once, so that a crowd of
	// waiters cannot start a dial storm. 0 means min(MaxConns, 4).
	MaxDialing int

	// Broken tells Do whether an error returned by its function means the
	// connection is unusable; when it reports true the connection is
	// discarded instead of released. nil means never.
	Broken func(err error) bool

	// Observer is told of acquires, releases, dials, closes, rejections,
	// timeouts and leaks, for metrics (see shoalprom and shoalotel). nil
	// costs nothing; set, it allocates nothing.
	Observer Observer

	// LeakThreshold, when set, reports a lease held longer than this once,
	// through Logger (Warn) and Observer, with the stack of the code that
	// acquired it, and counts it in Stats.Leaked. Capturing that stack
	// costs about a microsecond per acquire, so it happens only when this
	// is set. 0 turns leak detection off.
	LeakThreshold time.Duration

	// LeakReclaim, with LeakThreshold, also takes the connection back: it
	// is closed (ReasonLeaked), the holder's Release becomes a no-op and
	// Lease.Err reports ErrLeaseReclaimed. This is what DBConnection does;
	// it is off by default because it is dangerous: a holder that is merely
	// slow (a long report query, a big COPY) loses its connection mid-use
	// and sees errors from the closed connection. Set LeakThreshold well
	// above your slowest legitimate use.
	LeakReclaim bool

	// Budget, when set, is a limit on connections shared with other pools
	// (see Budget and shoaletcd): the pool asks it for a permit before every
	// dial, gives the permit back when the connection closes, and never
	// holds more connections than its share of the budget, nor more than
	// MaxConns. nil means MaxConns alone limits the pool.
	Budget Budget

	// Hooks are called at points of a connection's life. All optional.
	Hooks Hooks[T]

	// Logger receives connection opens and closes (Debug), dial failures
	// and load-shedding changes (Info, Warn). nil means no logging. Nothing
	// is logged per acquire.
	Logger *slog.Logger
}

// Hooks are optional functions the pool calls at points of a connection's
// life. A hook that panics is treated like one that said no (or failed), and
// the pool's counts stay right.
type Hooks[T any] struct {
	// OnConnect runs after Dial succeeds. An error closes the connection
	// and the dial counts as failed.
	OnConnect func(ctx context.Context, conn T) error

	// OnDisconnect runs whenever the pool closes a connection, with why,
	// just before Config.Close.
	OnDisconnect func(conn T, reason Reason)

	// BeforeAcquire runs before an idle connection is handed out; false
	// closes it (ReasonRejected) and the acquire moves on to another one.
	BeforeAcquire func(ctx context.Context, conn T) bool

	// AfterRelease runs when a lease is released; false closes the
	// connection (ReasonRejected) instead of keeping it.
	AfterRelease func(conn T) bool

	// StreamLimit, in multiplexed mode, gives a new connection's own limit
	// on concurrent leases before any is handed out: the server's
	// SETTINGS_MAX_CONCURRENT_STREAMS, say. A result below 1 or above
	// MaxStreams means MaxStreams. Lease.SetStreamLimit changes it later.
	StreamLimit func(conn T) int
}

// Defaults for fields whose zero value means "choose for me".
const (
	defaultHealthCheckAfter = time.Second
	defaultQueueInterval    = time.Second
	defaultMaxDialing       = 4

	// maxConnsLimit bounds MaxConns and MaxDialing: the pool keeps its
	// counts in 32 bits and a slot per connection from the start.
	maxConnsLimit = 1 << 20
	// maxHandoffAfter bounds HandoffAfter so that the stretched window
	// (maxStretch times it) stays within a time.Duration.
	maxHandoffAfter      = time.Duration(math.MaxInt64 / maxStretch)
	maxDefaultPartitions = 16
)

// validate checks every field and returns an error naming the first wrong one.
func (c *Config[T]) validate() error {
	type check struct {
		bad   bool
		field string
		why   string
	}
	checks := []check{
		{c.Dial == nil, "Dial", "is required"},
		{c.MaxConns <= 0, "MaxConns", fmt.Sprintf("must be > 0, got %d", c.MaxConns)},
		{c.MaxConns > maxConnsLimit, "MaxConns", fmt.Sprintf("must be <= %d, got %d", maxConnsLimit, c.MaxConns)},
		{c.MinIdle < 0, "MinIdle", fmt.Sprintf("must be >= 0, got %d", c.MinIdle)},
		{c.MinIdle > c.MaxConns && c.MaxConns > 0, "MinIdle", fmt.Sprintf("must be <= MaxConns (%d), got %d", c.MaxConns, c.MinIdle)},
		{c.MinConns < 0, "MinConns", fmt.Sprintf("must be >= 0, got %d", c.MinConns)},
		{c.MinConns > c.MaxConns && c.MaxConns > 0, "MinConns", fmt.Sprintf("must be <= MaxConns (%d), got %d", c.MaxConns, c.MinConns)},
		{c.MaxStreams < 0, "MaxStreams", fmt.Sprintf("must be >= 0, got %d", c.MaxStreams)},
		{c.Partitions < 0, "Partitions", fmt.Sprintf("must be >= 0, got %d", c.Partitions)},
		{c.MaxWaiters < 0, "MaxWaiters", fmt.Sprintf("must be >= 0, got %d", c.MaxWaiters)},
		{c.MaxDialing < 0, "MaxDialing", fmt.Sprintf("must be >= 0, got %d", c.MaxDialing)},
		{c.MaxDialing > maxConnsLimit, "MaxDialing", fmt.Sprintf("must be <= %d, got %d", maxConnsLimit, c.MaxDialing)},
		{c.HandoffAfter < 0, "HandoffAfter", fmt.Sprintf("must be >= 0, got %s", c.HandoffAfter)},
		{c.HandoffAfter > maxHandoffAfter, "HandoffAfter", fmt.Sprintf("must be <= %s, got %s", maxHandoffAfter, c.HandoffAfter)},
		{c.HandoffAfter > 0 && c.MaxStreams > 1, "HandoffAfter", fmt.Sprintf("applies to exclusive connections only; MaxStreams is %d", c.MaxStreams)},
		{c.QueueTarget < 0, "QueueTarget", fmt.Sprintf("must be >= 0, got %s", c.QueueTarget)},
		{c.QueueInterval < 0, "QueueInterval", fmt.Sprintf("must be >= 0, got %s", c.QueueInterval)},
		{c.QueueInterval > 0 && c.QueueTarget == 0, "QueueInterval", "is set but QueueTarget is 0; set QueueTarget to turn load shedding on"},
		{c.MaxLifetime < 0, "MaxLifetime", fmt.Sprintf("must be >= 0, got %s", c.MaxLifetime)},
		{c.LifetimeJitter < 0, "LifetimeJitter", fmt.Sprintf("must be >= 0, got %s", c.LifetimeJitter)},
		{c.LifetimeJitter > c.MaxLifetime && c.LifetimeJitter > 0, "LifetimeJitter", fmt.Sprintf("must be <= MaxLifetime (%s), got %s", c.MaxLifetime, c.LifetimeJitter)},
		{c.MaxIdleTime < 0, "MaxIdleTime", fmt.Sprintf("must be >= 0, got %s", c.MaxIdleTime)},
		{c.HealthCheckAfter < 0, "HealthCheckAfter", fmt.Sprintf("must be >= 0, got %s", c.HealthCheckAfter)},
		{c.LeakThreshold < 0, "LeakThreshold", fmt.Sprintf("must be >= 0, got %s", c.LeakThreshold)},
		{c.LeakReclaim && c.LeakThreshold == 0, "LeakReclaim", "is set but LeakThreshold is 0; set LeakThreshold to say when a lease counts as leaked"},
		{c.DialTimeout < 0, "DialTimeout", fmt.Sprintf("must be >= 0, got %s", c.DialTimeout)},
	}
	for _, ch := range checks {
		if ch.bad {
			return &ConfigError{Field: ch.field, Reason: ch.why}
		}
	}
	return nil
}

// ConfigError is returned by New for a Config that cannot work; Field names
// the Config field that is wrong.
type ConfigError struct {
	Field  string // the Config field, such as "MinIdle"
	Reason string // what is wrong with it, with the value given
}

// Error returns the message, naming the field: "shoal: Config.MinIdle must
// be <= MaxConns (16), got 20".
func (e *ConfigError) Error() string {
	return "shoal: Config." + e.Field + " " + e.Reason
}
