package shoal

import (
	"context"
	"fmt"
	"log/slog"
	"math"
	"strings"
	"time"
)

// Config describes a pool. Dial is required; every other field has a
// working zero value. New checks the whole Config (Validate) and names the
// first field that is wrong.
//
// Every setting follows one convention, the same in every adapter: zero
// means the default written beside the field (which may be "no limit" or
// "off"), and a negative value means off (no limit, no floor, no check)
// wherever off makes sense; where it does not (MaxConns, InitialMaxConns,
// MaxStreams, Partitions, MaxDialing, QueueInterval, HealthCheckAfter) a
// negative value is a *ConfigError.
//
// MaxStreams picks the mode. Exclusive connections (MaxStreams 0 or 1, a
// database session) have four settings of their own: MinIdle, Partitions,
// BargeWindow and HealthCheckPeriod, each an error with MaxStreams > 1
// rather than silently ignored. Multiplexed ones (MaxStreams > 1, an HTTP/2
// or gRPC connection) have Hooks.StreamLimit and Lease.SetStreamLimit, which
// do nothing in exclusive mode, where a connection serves one lease anyway.
// MinConns is the floor that suits both.
//
// Close and Hooks.OnDisconnect both run when a connection closes, and stay
// two on purpose: Close is the connection's own close and takes a method
// value as it is (net.Conn.Close), while OnDisconnect is for code that wants
// to know why, and a Close with a reason would make every user wrap theirs.
type Config[T any] struct {
	// Name names the pool in its logs (a "pool" attribute on every line),
	// its errors (shoal pool "orders": acquire: ...), Stats.Name, metrics
	// and the live page, so that a process with several pools tells them
	// apart. Empty means a name made up from the connection type and a
	// count of the pools of that type made so far, such as "net.Conn-1".
	// A password in it (a URL's, or a password=... pair's, as when a pool
	// is named after its connection string) is masked where it stands,
	// in all of these, and the rest is kept as given.
	Name string

	// Dial opens a connection. Required. It runs in a background goroutine
	// under a context that ends when the pool is closed or DialTimeout
	// passes, so a caller who gives up waiting does not waste the dial: the
	// connection goes to the next waiter or stays idle.
	//
	// How a failed dial reaches callers: a pool that has never connected
	// hands the first error to its callers at once; later, one failure is
	// a blip that callers with time left wait through (the next try comes
	// after 10ms, doubling to 200ms), and once dials will have failed for
	// 100ms with nothing open the server counts as down and callers get
	// its error at once, while the pool goes on trying in the background.
	// Wrap an error that no retry can mend (a refused password, a database
	// that does not exist, a certificate the client rejects) with
	// Permanent: callers get it at once and the pool tries again only
	// every 1s, doubling to 10s, while it lasts. A run of failures is
	// logged once as it starts, once a minute while it lasts, and once as
	// it ends.
	Dial func(ctx context.Context) (T, error)

	// Close closes a connection. Optional: when nil, a connection whose type
	// has a Close method (Close() error, as net.Conn's, or Close()) is
	// closed with it, and any other is dropped; to drop connections that
	// have a Close method unclosed, set a Close that does nothing. It runs on a goroutine of its own, after Hooks.OnDisconnect, so that
	// a slow close never holds up the caller that let the connection go;
	// the connection counts against MaxConns (and a Budget) until it
	// returns. A panic or an error from Close is logged and otherwise
	// ignored: the connection counts as closed either way.
	Close func(conn T) error

	// MaxConns is the most connections open at once, counting those being
	// dialled. 0 means max(4, runtime.NumCPU()), as pgxpool's default.
	// A negative value is an error: a pool with no limit is not a pool.
	MaxConns int

	// InitialMaxConns, when above 0, is the limit the pool starts with
	// in place of MaxConns, as if SetMaxConns(InitialMaxConns) had been
	// called before the pool dialled anything: MinIdle and MinConns are
	// still checked against MaxConns, and are kept only up to the limit
	// until SetMaxConns raises it, as after SetMaxConns lowers it. It is
	// for a pool made once its owner has lowered the limit, with floors
	// that must come back as the limit does (shoalhttp's origins): a
	// SetMaxConns right after New would leave the floors' first dials a
	// moment in which to pass the lower limit. 0 (the default) means
	// MaxConns; a negative value, or one above MaxConns, is an error.
	InitialMaxConns int

	// MinIdle connections are kept open and idle by the background
	// maintenance goroutine (never more than MaxConns in all). 0 (the
	// default) or negative keeps none. Idle reaping never takes the pool
	// below MinIdle. Exclusive connections only: with MaxStreams > 1 it is
	// an error, and MinConns is the floor to set.
	MinIdle int

	// MinConns connections are kept open, busy or idle, by the background
	// maintenance goroutine: it dials when fewer are open or being
	// dialled, as after a lifetime expiry or a broken connection (one
	// being closed counts no more, though its place in MaxConns stays
	// taken until its Close returns), and idle
	// reaping never takes the pool below it. 0 (the default) or negative
	// keeps none. It is the floor for multiplexed connections (MinIdle is
	// an error there): a MinConns of 2 keeps two connections to spread
	// leases over even while both are busy. Warm waits for max(MinIdle,
	// MinConns).
	MinConns int

	// MaxStreams is how many leases one connection serves at once: 0 or 1
	// means exclusive connections (database sessions), more means
	// multiplexed ones (HTTP/2, gRPC). In multiplexed mode a new lease goes
	// to the least-loaded connection (unless Fill prefers a loaded one) and
	// a new connection is dialled only when every open one is full, unless
	// BusyStreams says sooner. A connection keeps a lease record per
	// stream from its dial on (about 64 bytes each), so MaxStreams is at
	// most 65536 (a larger value is an error): write the streams the pool
	// should use, not a server's "unlimited" (2^31-1).
	MaxStreams int

	// BusyStreams, in multiplexed mode, is the load at which a connection
	// counts as busy: once every open connection carries BusyStreams
	// leases, the next lease still goes to the least-loaded one, and the
	// pool dials another connection in the background (one at a time,
	// within MaxConns and the Budget's share), so that load spreads over
	// more connections before any fills up. It suits a server that works
	// on one connection's requests one after another (PostgreSQL's
	// pipelined statements), where more connections run more at once. 0
	// (the default) or negative means MaxStreams: a new connection only
	// once every open one is full, the fewest connections. Above
	// MaxStreams, or with exclusive connections, it is an error.
	BusyStreams int

	// Fill, in multiplexed mode, lets a loaded connection take new leases
	// before less-loaded ones: a new lease goes to the most loaded
	// connection, not full, for which Fill(value, streams) reports true,
	// streams being the leases it carries now (1 or more), and to the
	// least-loaded one only when Fill accepts none. It suits a connection
	// whose requests cost less together than apart, such as PostgreSQL's
	// pipelined statements, which leave in one write when they queue on
	// one connection, for as long as that connection answers them
	// quickly. The pool calls it with its lock held: it must be quick and
	// must not call the pool; one that panics said no. Nil (the default)
	// spreads leases over the connections, least-loaded first. With
	// exclusive connections it is an error.
	Fill func(value T, streams int) bool

	// Avoid, in multiplexed mode, reports a loaded connection that should
	// take no new lease while another can: one held up by a slow request,
	// behind which a new one would wait. The pool asks only about the
	// connection it would pick otherwise, when that one carries leases
	// and Fill preferred none; a connection Avoid reports takes a new
	// lease only when every other that could is full, retired or avoided
	// too (and, carrying BusyStreams leases, has the pool dial another),
	// and then only when the caller cannot wait for a new connection:
	// while the pool may open one (below its limit, or at a Budget share
	// below MaxConns with a Budget that divides again when asked,
	// BudgetAsker, when the leases held and waiting, with the caller's,
	// make more connections of BusyStreams than the share, and not
	// backing off), Acquire waits for it, or for a stream to free,
	// whichever comes first, and takes the avoided connection if that
	// dial fails; TryAcquire, at the limit, or with the wait queue full,
	// the avoided connection takes the lease.
	// The pool calls it with its lock held: it must be quick and must not
	// call the pool; one that panics said no. Nil (the default) avoids
	// none. With exclusive connections it is an error.
	Avoid func(value T) bool

	// Partitions splits the idle exclusive connections into this many
	// lock-free stacks to cut contention between cores. 0 lets the pool
	// choose (GOMAXPROCS, at most MaxConns, at most 16); 1 is a single
	// partition. An acquire always steals from other partitions before it
	// dials or waits. More partitions than MaxConns is allowed, since
	// SetMaxConns may raise the limit later: the partitions beyond the
	// connections stay empty, and an acquire whose home partition is empty
	// steals, at the cost of a look at each empty one on the way.
	// Exclusive connections only: more than 1 with MaxStreams > 1 is an
	// error, and so is more than 1024 (each partition takes its own cache
	// lines, allocated in New, and an acquire that finds nothing idle
	// looks at every one).
	Partitions int

	// MaxWaiters bounds the callers waiting in Acquire; past the bound
	// Acquire fails at once with ErrExhausted. 0 (the default) or negative
	// means no bound.
	MaxWaiters int

	// BargeWindow turns on barging: while the oldest waiter has waited
	// less than BargeWindow, a release puts its connection back on the idle
	// stacks instead of handing it to that waiter, so that the next Acquire
	// (often the releaser's own, coming straight back) takes it without
	// waking anyone. Past the window releases go to the waiters in order
	// again. 0 (the default) or negative is strict FIFO: every release
	// with callers waiting hands its connection to the oldest, a wake-up
	// each.
	//
	// The window stretches in proportion when more than 8 callers wait per
	// open connection, to 4 times BargeWindow at most. A connection left
	// idle while someone waits is handed over within 200µs (BargeWindow, if
	// shorter); that its releaser did not come back suspends barging for
	// 100ms. A caller whose context ends sooner than the oldest waiter has
	// waited never barges: it waits its turn (and most likely gives up in
	// the queue, at its deadline) rather than take a connection it would
	// abandon mid-statement. It pays where leases are held across network
	// round trips and callers outnumber connections: shoalpgx and
	// shoalhttp (HTTP/1.1) default to 4ms (figures in BENCHMARKS.md).
	// Exclusive connections only: setting it with MaxStreams > 1 is an
	// error.
	BargeWindow time.Duration

	// QueueTarget turns on load shedding in the style of DBConnection: when
	// every acquire during a QueueInterval waited longer than QueueTarget,
	// the pool counts as overloaded and, until an interval passes in which
	// some acquire waited less, fails waiters that have waited 2*QueueTarget
	// with ErrExhausted instead of letting the queue grow without end.
	// 0 (the default) or negative: no shedding.
	QueueTarget time.Duration

	// QueueInterval is the window over which QueueTarget is judged.
	// 0 means 1s. Setting it without QueueTarget is an error, and so is a
	// negative value.
	QueueInterval time.Duration

	// MaxLifetime closes a connection once it is this old (plus its share
	// of LifetimeJitter): at release, when found idle, or when next
	// acquired. 0 (the default) or negative means no limit: the core knows
	// nothing of what its connections reach, and the adapters set their
	// own defaults (shoalpgx 1h, shoalhttp 10m).
	MaxLifetime time.Duration

	// LifetimeJitter spreads the lifetimes so that connections opened
	// together do not all close together: each connection's own lifetime is
	// drawn uniformly from [MaxLifetime, MaxLifetime+LifetimeJitter], as
	// pgxpool draws it, so that MaxLifetime is the least a connection
	// lives. 0 (the default) or negative: none. Setting it without
	// MaxLifetime is an error.
	LifetimeJitter time.Duration

	// MaxIdleTime closes a connection that has been idle this long, never
	// taking the pool below MinIdle or MinConns. 0 (the default) or
	// negative means no limit.
	MaxIdleTime time.Duration

	// HealthCheck, when set, is called on Acquire for a connection that has
	// been idle at least HealthCheckAfter (and, with HealthCheckPeriod, on
	// idle connections in the background); IdleFor(ctx) says how long. An
	// error closes the connection (ReasonHealth) and the acquire moves on
	// to another one.
	HealthCheck func(ctx context.Context, conn T) error

	// HealthCheckAfter is the idleness after which HealthCheck runs.
	// 0 means 1s. Setting it without HealthCheck is an error, and so is a
	// negative value (leave HealthCheck nil for no check).
	HealthCheckAfter time.Duration

	// HealthCheckPeriod, when set, has the maintenance goroutine run
	// HealthCheck on idle connections too: every HealthCheckPeriod, each
	// connection idle at least HealthCheckAfter is taken off its idle
	// stack, checked under a context bounded by healthCheckTimeout (5s), and
	// put back, or closed (ReasonHealth) if the check fails, so that a
	// connection the server dropped while idle is replaced before anyone
	// asks for it. The due connections of one partition are checked one
	// after another, each put back as soon as it passes, so keep the check
	// cheap (shoalpgx's looks at the socket without a round trip). 0 (the
	// default) or negative checks only on Acquire. Exclusive connections
	// only; setting it without HealthCheck is an error.
	HealthCheckPeriod time.Duration

	// DialTimeout bounds each dial. 0 (the default) or negative means no
	// bound beyond Dial's own and the pool's life: the adapters set theirs.
	DialTimeout time.Duration

	// MaxDialing bounds the dials in flight at once, so that a crowd of
	// waiters cannot start a dial storm. 0 means min(MaxConns, 4), with
	// MaxConns as SetMaxConns leaves it; to let every connection dial at
	// once set it to MaxConns or more: dials count under MaxConns anyway
	// (a negative value is an error).
	MaxDialing int

	// Broken tells Do whether an error returned by its function means the
	// connection is unusable; when it reports true the connection is
	// discarded instead of released. nil means never.
	Broken func(err error) bool

	// Observer is told of acquires, releases, dials, closes, rejections,
	// timeouts and leaks, for metrics (see shoalprom and shoalotel). nil
	// costs nothing; set, it allocates nothing. One that is also a
	// WaitTracer that traces (shoalotel's with wait spans on) makes each
	// acquire keep the frame of the code that took the lease too, to be
	// named by Holders and a timed-out acquire's Exhaustion, as
	// LeakThreshold does with its whole stack.
	Observer Observer

	// LeakThreshold, when set, reports a lease held longer than this once,
	// through Logger (Warn) and Observer, with the stack of the code that
	// acquired it, and counts it in Stats.Leaked. Capturing that stack
	// costs a stack walk per acquire (BENCHMARKS.md, "Explaining an
	// exhausted pool"), so it happens only when this is set. 0 (the
	// default) or negative: no leak detection.
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

	// Logger receives connection opens and closes (Debug), dial failures,
	// leaks and load-shedding changes (Info, Warn), each line with a
	// "pool" attribute holding Name. nil means slog.Default(), so that a
	// failing server is seen (at its default level, Info, the Debug lines
	// are not); slog.New(slog.DiscardHandler) silences the pool. Nothing
	// is logged per acquire.
	Logger *slog.Logger
}

// Hooks are optional functions the pool calls at points of a connection's
// life. A hook that panics is treated like one that said no (or failed), and
// the pool's counts stay right.
type Hooks[T any] struct {
	// OnConnect runs after Dial succeeds. An error closes the connection
	// (ReasonRejected, counted in Stats.Closed) and the dial counts as
	// failed (Stats.DialErrors).
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

// Bounds that Validate holds fields to.
const (
	// maxConnsLimit bounds MaxConns and MaxDialing: the pool keeps its
	// counts in 32 bits. The slot table grows with the connections opened,
	// so a limit this high costs nothing until it is used (pgxpool users
	// write math.MaxInt32 to mean "no limit").
	maxConnsLimit = math.MaxInt32
	// maxBargeWindow bounds BargeWindow so that the stretched window
	// (maxStretch times it) stays within a time.Duration.
	maxBargeWindow = time.Duration(math.MaxInt64 / maxStretch)
	// maxStreamsLimit bounds MaxStreams: a multiplexed connection
	// allocates a lease record per stream when it is adopted, so the
	// bound is memory, about 4 MiB a connection at most.
	maxStreamsLimit = 1 << 16
	// maxPartitions bounds Partitions: New allocates every partition's
	// cache lines, and an acquire that finds nothing idle looks at each.
	maxPartitions = 1024
)

// Validate checks every field and returns a *ConfigError naming the first
// wrong one, or nil. New calls it; an adapter that builds a Config calls it
// to check the fields it passes through, instead of checking them again.
// The rules that relate two fields see them as New will use them: a
// negative value as off, MaxConns 0 as its default.
func (c *Config[T]) Validate() error {
	type check struct {
		bad   bool
		field string
		why   string
	}
	n := c.normalized()
	checks := []check{
		{c.Dial == nil, "Dial", "is required"},
		{c.MaxConns < 0, "MaxConns", fmt.Sprintf("must be >= 0 (0 means %d), got %d", defaultMaxConns(), c.MaxConns)},
		{c.MaxConns > maxConnsLimit, "MaxConns", fmt.Sprintf("must be <= %d, got %d", maxConnsLimit, c.MaxConns)},
		{c.InitialMaxConns < 0, "InitialMaxConns", fmt.Sprintf("must be >= 0 (0 means MaxConns), got %d", c.InitialMaxConns)},
		{c.InitialMaxConns > n.MaxConns, "InitialMaxConns", fmt.Sprintf("must be <= MaxConns (%d), got %d", n.MaxConns, c.InitialMaxConns)},
		{n.MinIdle > n.MaxConns, "MinIdle", fmt.Sprintf("must be <= MaxConns (%d), got %d", n.MaxConns, c.MinIdle)},
		{n.MinIdle > 0 && c.MaxStreams > 1, "MinIdle", fmt.Sprintf("applies to exclusive connections only (MaxStreams is %d): a new lease goes to the least-loaded connection, so an idle one is the next to be used and never stays idle; set MinConns to keep connections open", c.MaxStreams)},
		{n.MinConns > n.MaxConns, "MinConns", fmt.Sprintf("must be <= MaxConns (%d), got %d", n.MaxConns, c.MinConns)},
		{c.MaxStreams < 0, "MaxStreams", fmt.Sprintf("must be >= 0 (0 or 1: exclusive connections), got %d", c.MaxStreams)},
		{c.MaxStreams > maxStreamsLimit, "MaxStreams", fmt.Sprintf("must be <= %d (each stream has a lease record from the dial on), got %d", maxStreamsLimit, c.MaxStreams)},
		{n.BusyStreams > 0 && c.MaxStreams <= 1, "BusyStreams", fmt.Sprintf("applies to multiplexed connections only; MaxStreams is %d", c.MaxStreams)},
		{n.BusyStreams > c.MaxStreams && c.MaxStreams > 1, "BusyStreams", fmt.Sprintf("must be <= MaxStreams (%d), got %d", c.MaxStreams, c.BusyStreams)},
		{c.Fill != nil && c.MaxStreams <= 1, "Fill", fmt.Sprintf("applies to multiplexed connections only; MaxStreams is %d", c.MaxStreams)},
		{c.Avoid != nil && c.MaxStreams <= 1, "Avoid", fmt.Sprintf("applies to multiplexed connections only; MaxStreams is %d", c.MaxStreams)},
		{c.Partitions < 0, "Partitions", fmt.Sprintf("must be >= 0 (0 lets the pool choose), got %d", c.Partitions)},
		{c.Partitions > maxPartitions, "Partitions", fmt.Sprintf("must be <= %d, got %d", maxPartitions, c.Partitions)},
		{c.Partitions > 1 && c.MaxStreams > 1, "Partitions", fmt.Sprintf("applies to exclusive connections only; MaxStreams is %d", c.MaxStreams)},
		{c.MaxDialing < 0, "MaxDialing", fmt.Sprintf("must be >= 0 (0 means min(MaxConns, 4)), got %d", c.MaxDialing)},
		{c.MaxDialing > maxConnsLimit, "MaxDialing", fmt.Sprintf("must be <= %d, got %d", maxConnsLimit, c.MaxDialing)},
		{c.BargeWindow > maxBargeWindow, "BargeWindow", fmt.Sprintf("must be <= %s, got %s", maxBargeWindow, c.BargeWindow)},
		{n.BargeWindow > 0 && c.MaxStreams > 1, "BargeWindow", fmt.Sprintf("applies to exclusive connections only; MaxStreams is %d", c.MaxStreams)},
		{c.QueueInterval < 0, "QueueInterval", fmt.Sprintf("must be >= 0 (0 means %s), got %s", defaultQueueInterval, c.QueueInterval)},
		{c.QueueInterval > 0 && n.QueueTarget == 0, "QueueInterval", "is set but QueueTarget is not; set QueueTarget to turn load shedding on"},
		{c.LifetimeJitter > 0 && n.MaxLifetime == 0, "LifetimeJitter", "is set but MaxLifetime is not; set MaxLifetime to give connections a lifetime to spread"},
		{c.HealthCheckAfter < 0, "HealthCheckAfter", fmt.Sprintf("must be >= 0 (0 means %s), got %s", defaultHealthCheckAfter, c.HealthCheckAfter)},
		{c.HealthCheckAfter > 0 && c.HealthCheck == nil, "HealthCheckAfter", "is set but HealthCheck is nil; set HealthCheck to say how to check a connection"},
		{n.HealthCheckPeriod > 0 && c.HealthCheck == nil, "HealthCheckPeriod", "is set but HealthCheck is nil; set HealthCheck to say how to check a connection"},
		{n.HealthCheckPeriod > 0 && c.MaxStreams > 1, "HealthCheckPeriod", fmt.Sprintf("applies to exclusive connections only; MaxStreams is %d", c.MaxStreams)},
		{c.LeakReclaim && n.LeakThreshold == 0, "LeakReclaim", "is set but LeakThreshold is not; set LeakThreshold to say when a lease counts as leaked"},
	}
	for _, ch := range checks {
		if ch.bad {
			return &ConfigError{Field: ch.field, Reason: ch.why}
		}
	}
	return nil
}

// ConfigError is the error of a configuration that cannot work: a Config
// (from Validate and New), or an adapter's own options, which report their
// fields through it too. Struct names the type that holds the field, such
// as "shoalhttp.Options"; empty means "shoal.Config".
type ConfigError struct {
	Struct string // the type holding the field; empty for shoal.Config
	Field  string // the field, such as "MinIdle"
	Reason string // what is wrong with it, with the value given
	Err    error  // the error behind Reason, if one is (a Budget's refusal); nil for most
}

// Error returns the message, naming the package, type and field:
// "shoal: Config.MinIdle must be <= MaxConns (16), got 20".
func (e *ConfigError) Error() string {
	pkg, typ := "shoal", "Config"
	if p, t, ok := strings.Cut(e.Struct, "."); ok {
		pkg, typ = p, t
	}
	return pkg + ": " + typ + "." + e.Field + " " + e.Reason
}

// Unwrap returns the error behind Reason, or nil.
func (e *ConfigError) Unwrap() error { return e.Err }
