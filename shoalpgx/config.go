package shoalpgx

import (
	"context"
	"log/slog"
	"runtime"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
)

// Defaults, the same as pgxpool's where pgxpool has the setting.
const (
	defaultMinMaxConns       = 4
	defaultMaxConnLifetime   = time.Hour
	defaultMaxConnIdleTime   = 30 * time.Minute
	defaultHealthCheckPeriod = time.Minute
	defaultHealthCheckAfter  = time.Second
	defaultBargeWindow       = 4 * time.Millisecond // see Config.BargeWindow

	// defaultConnectTimeout bounds a dial when the connection string sets no
	// connect_timeout: dials run in the background, so nothing else would
	// stop one that hangs (pgxpool uses the same bound).
	defaultConnectTimeout = 2 * time.Minute

	// defaultHostConnectTimeout bounds each host's part of a multi-host
	// dial (see Config.HostConnectTimeout): far above a healthy connect's
	// time, even with TLS and SCRAM over a WAN, and short enough that a
	// silent first host costs a failover about as much as the callers'
	// usual deadlines.
	defaultHostConnectTimeout = 2 * time.Second
	// defaultRoleCheckPeriod: see Config.RoleCheckPeriod. A query a second
	// on one idle connection costs the server nothing it would notice.
	defaultRoleCheckPeriod = time.Second
	// defaultPipelineFill: see Config.PipelineFill. Long enough that a
	// few dozen small statements fill a connection, where the writes and
	// reads they share save more than their wait costs; about what one
	// more round trip costs a caller across a network.
	defaultPipelineFill = 800 * time.Microsecond

	// closeTimeout bounds closing one connection: sending Terminate and
	// waiting for pgconn's cleanup.
	closeTimeout = 5 * time.Second

	// defaultCancelTimeout: see Config.CancelTimeout. A cancel request
	// costs the server a new connection's start (a fork, no login) and a
	// signal; a second covers that many times over on a loaded server
	// across a WAN, and is what a caller waits at most past its deadline
	// when the server has stopped answering.
	defaultCancelTimeout = time.Second

	// resetTimeout bounds the ROLLBACK that resets a connection released
	// inside a transaction; past it the connection is closed instead.
	resetTimeout = 5 * time.Second
)

// Config is the configuration of a Pool. Create it with ParseConfig, then
// change what you need before NewWithConfig. The field names and types follow
// pgxpool.Config where pgxpool has the setting; the others come from the shoal
// core. ParseConfig sets MaxConns and the other pgxpool defaults; every other
// field works at its zero value. NewWithConfig takes only a Config made by
// ParseConfig (or a Copy of one), and returns an error for any other, where
// pgxpool panics.
type Config struct {
	// Name names the pool in its logs, errors, statistics and metrics, so
	// that a process with several pools tells them apart. Empty, the
	// default, means the connection string's host:port and database
	// ("db.internal:5432/app"; several hosts joined by commas). The read
	// pool (Reads) is named Name + "/reads". A password in the name is
	// masked wherever the name shows; after a name that ends in a bare
	// password value ("... password=pw") the suffix follows a space, which
	// ends the value, so that it is not masked with it. Connection string:
	// pool_name.
	Name string

	// ConnConfig is how to connect. Required; ParseConfig fills it in. Its
	// Tracer, when it also implements AcquireTracer or ReleaseTracer, traces
	// the pool's acquires and releases too (see the package doc, "Tracing").
	ConnConfig *pgx.ConnConfig

	// BeforeConnect is called before a new connection is made, with a copy
	// of ConnConfig that it may change for this connection only. An error
	// fails the dial.
	BeforeConnect func(ctx context.Context, cfg *pgx.ConnConfig) error

	// AfterConnect is called after a connection is established and before
	// it is added to the pool. An error closes it and fails the dial. It
	// runs in the pool's background dial, not under the context of the
	// acquire that asked for the connection: its ctx ends when the pool
	// closes, or at the connect timeout (ConnConfig.ConnectTimeout, 2
	// minutes when unset) after the hook started, so that a hook stuck on a
	// lock or a silent server fails its dial instead of holding a place
	// under MaxConns until Close. A hook must honour ctx for that to work.
	AfterConnect func(ctx context.Context, conn *pgx.Conn) error

	// BeforeAcquire is called before a connection is handed out; false
	// closes it and the acquire tries another.
	//
	// Deprecated: use PrepareConn, as in pgxpool. BeforeAcquire runs as a
	// PrepareConn that never fails, and only when PrepareConn is nil: with
	// both set, BeforeAcquire is ignored.
	BeforeAcquire func(ctx context.Context, conn *pgx.Conn) bool

	// PrepareConn is called before a connection is handed out, after the
	// ping (see ShouldPing), as in pgxpool. What it returns decides:
	//
	//   - true, nil: the connection is handed out;
	//   - true, an error: the connection goes back to the pool (without
	//     AfterRelease) and the acquire fails with the error;
	//   - false, an error: the connection is closed and the acquire fails
	//     with the error;
	//   - false, nil: the connection is closed and the acquire tries
	//     another, up to MaxConns+1 connections in all.
	//
	// It runs on the acquiring goroutine under the acquire's context, for
	// every acquire (Pool.Exec and the other operations acquire too) and
	// for each connection AcquireAllIdle takes, where any error or false
	// closes the connection. If it panics, the connection is closed and the
	// panic goes on.
	PrepareConn func(ctx context.Context, conn *pgx.Conn) (bool, error)

	// ShouldPing decides, on every acquire, whether the connection is pinged
	// before it is handed out (a failed ping closes it and the acquire tries
	// another), as in pgxpool. nil means ping when it has been idle longer
	// than HealthCheckAfter (never, when that is 0). Setting it costs an
	// allocation on each acquire of an idle connection, where the pool
	// measures its idleness for IdleDuration. The look at the socket
	// (HealthCheckAfter) still runs, and a TLS connection whose look could
	// not tell is pinged whatever ShouldPing says. If it panics, the
	// connection is closed and the panic goes on.
	ShouldPing func(ctx context.Context, params ShouldPingParams) bool

	// AfterRelease is called when a connection that is idle and outside any
	// transaction is released; false closes it instead of keeping it. It
	// runs on the releasing goroutine (pgxpool runs it on a new one): keep
	// it short, or start your own goroutine.
	AfterRelease func(conn *pgx.Conn) bool

	// BeforeClose is called right before the pool closes a connection, for
	// whatever reason.
	BeforeClose func(conn *pgx.Conn)

	// MaxConns is the most connections open at once, counting dials in
	// flight. Default: the greater of 4 and runtime.NumCPU(), as in pgxpool.
	// Connection string: pool_max_conns.
	MaxConns int32

	// Pipeline, above 0, lets the statements that Exec, Query, QueryRow
	// and SendBatch run outside a transaction share connections, up to
	// Pipeline in flight on one, each with its own Sync so that each
	// succeeds or fails alone; transactions, Acquire, CopyFrom and what
	// leaves state in the session get a whole connection as without it
	// (see the package doc, "Pipelining"). MaxConns bounds both kinds
	// together, shared between them by demand; a new shared connection
	// opens as soon as every open one has a statement in flight; MaxConns
	// must be 2 or more and MinConns below MaxConns-1. 0 (the default) gives
	// every statement a whole connection, as pgxpool does; below 0 is an
	// error. Connection string: pool_pipeline.
	Pipeline int

	// PipelineFill, with Pipeline, is how long a statement may expect to
	// wait on a shared connection behind others, so that statements share
	// a connection before they spread: once the pool has more callers than
	// shared connections open, a new statement goes to the busiest shared
	// connection whose statements in flight, one more included, would all
	// be answered within PipelineFill at the pace the server has been
	// answering them there, and to the least-loaded one only when none
	// would. Statements that share a connection leave in fewer writes and
	// come back in fewer reads, which on a busy client or server is worth
	// more than the wait; with no more callers than connections, each has
	// one to itself. Slow statements fill nothing, and a connection whose
	// oldest statement has been at the server longer than PipelineFill (a
	// slow statement among quick ones) takes no more until it answers,
	// unless every other shared connection is full or held up too.
	// Default 800µs; 0 spreads statements over the connections,
	// least-loaded first, with no look at the pace; below 0 is an error.
	// Connection string: pool_pipeline_fill.
	PipelineFill time.Duration

	// MinConns is the fewest connections the pool keeps open, busy or idle,
	// as in pgxpool: they are dialled in the background, and idle reaping
	// stops at MinConns. While MinConns connections are all busy the pool
	// dials more only for callers that wait. Default 0.
	// Connection string: pool_min_conns.
	MinConns int32

	// MinIdleConns is the fewest idle connections the pool keeps, as in
	// pgxpool: when callers take idle connections, more are dialled in the
	// background (never more than MaxConns open), so that a burst finds
	// connections ready. Default 0.
	// Connection string: pool_min_idle (shoal's name), pool_min_idle_conns
	// (pgxpool's).
	MinIdleConns int32

	// MaxConnLifetime closes a connection this long after it was opened:
	// when it is released or found idle, never under a holder. Default 1h;
	// 0 means no limit. Connection string: pool_max_conn_lifetime.
	MaxConnLifetime time.Duration

	// MaxConnLifetimeJitter spreads lifetimes as pgxpool does: each
	// connection lives a random duration in
	// [MaxConnLifetime, MaxConnLifetime+MaxConnLifetimeJitter], drawn for
	// each connection, so that connections opened together do not close
	// together. Default 0. Ignored when MaxConnLifetime is 0.
	// Connection string: pool_max_conn_lifetime_jitter.
	MaxConnLifetimeJitter time.Duration

	// MaxConnIdleTime closes a connection that has been idle this long,
	// never going below the minimum above. Default 30m; 0 means no limit.
	// Connection string: pool_max_conn_idle_time.
	MaxConnIdleTime time.Duration

	// HealthCheckAfter is the idleness after which an acquire pings a
	// connection before handing it out, when ShouldPing is nil (a failed
	// ping closes it and the acquire tries another). Default 1s, pgxpool's
	// ShouldPing default. Sooner, after a millisecond of idleness, an
	// acquire also looks at the connection's socket without a round trip
	// (one non-blocking recv): it replaces the connection if the server
	// closed it or sent it a fatal error, as pg_terminate_backend, a
	// restart or idle_session_timeout do, and pings at once if anything is
	// waiting on a TLS connection (where the bytes cannot be read without
	// decrypting them). A pipelined statement about to go on a shared
	// connection idle that long gets the same look. 0 turns the look, the
	// default pings and HealthCheckPeriod off. Connection string:
	// pool_health_check_after.
	HealthCheckAfter time.Duration

	// PingTimeout bounds that ping. The ping is not cut short with the
	// acquire's context, whether it is cancelled or its deadline passes: an
	// acquire whose context ends mid-ping (or a database/sql caller's, in
	// shoalpgx/stdlib) returns at once, and the ping goes on, within
	// PingTimeout and for a minute more at most, so that a healthy
	// connection is kept rather than closed by pgx mid-ping. Default 0: no
	// bound of its own. Connection string: pool_ping_timeout.
	PingTimeout time.Duration

	// CancelTimeout is how long a statement whose context ended may wait
	// for the server to answer the cancel request the pool sends for it.
	// When a caller's context ends while its statement runs, the pool asks
	// the server to cancel the statement (a PostgreSQL cancel request) and
	// the caller returns with the server's answer, an error that matches
	// both ctx.Err() and SQLSTATE 57014, usually within a round trip or
	// two; the connection goes back to the pool once no cancel request can
	// reach a later statement. A server that has not answered within
	// CancelTimeout has the connection closed, and the caller gets a
	// timeout error then. Default 1s; 0 closes the connection at once, as
	// pgx does by default. It applies with the ConnConfig's
	// BuildContextWatcherHandler that ParseConfig installs; set your own
	// handler there (after ParseConfig) and pgx does what it says instead.
	// With Pipeline, a shared connection whose oldest statement's caller
	// gave up and that has answered nothing for CancelTimeout takes no new
	// statements, and once no caller waits on it has the server cancel what
	// it runs, and is closed if that is not answered within CancelTimeout
	// either (with 0, unless the server has answered by the time the pool
	// looks again, right after sending the cancel request); Close does the
	// same, without the first wait.
	// Connection string: pool_cancel_timeout.
	CancelTimeout time.Duration

	// HealthCheckPeriod is how often the maintenance goroutine looks at
	// the idle connections' sockets, as on acquire (see HealthCheckAfter;
	// no round trip), and closes those the server closed or sent a fatal
	// error, so that they are replaced (MinConns, MinIdleConns) before
	// anyone asks for them, as pgxpool's background health check does.
	// Each connection idle for a millisecond (or HealthCheckAfter, if
	// less) is looked at. Over TLS the look cannot tell, and such a
	// connection is left for the acquire's ping. Default 1m, as in
	// pgxpool; 0 turns it off (pgxpool requires it to be positive). It
	// does nothing when HealthCheckAfter is 0. Lifetimes, idle times and
	// the minimums are kept by the maintenance goroutine whatever its
	// value. Connection string: pool_health_check_period.
	HealthCheckPeriod time.Duration

	// Partitions is the number of lock-free idle stacks connections are
	// spread over, to cut contention between cores. 0 lets the core choose
	// (GOMAXPROCS, at most MaxConns, at most 16). Connection string:
	// pool_partitions.
	Partitions int

	// MaxWaiters bounds the callers waiting in Acquire; past it an acquire
	// fails at once with shoal.ErrExhausted. 0 means unlimited. Connection
	// string: pool_max_waiters.
	MaxWaiters int

	// BargeWindow is how long the oldest caller waiting in Acquire may be
	// passed over by callers arriving after it (shoal.Config.BargeWindow,
	// which says how the window stretches when many wait). Default 4ms:
	// while the oldest waiter has waited less, a released connection goes
	// to whoever asks next, usually the releasing goroutine coming straight
	// back, with no wake-up; after that, releases go to the waiters in
	// order. With more callers than connections it buys throughput and a
	// far lower median wait for a longer tail (figures in BENCHMARKS.md,
	// "Barging"). 0 is strict first-come, first-served hand-off.
	// Connection string: pool_barge_window.
	BargeWindow time.Duration

	// MaxDialing bounds the dials in flight at once. 0 means the core's
	// default, min(MaxConns, 4).
	MaxDialing int

	// HostConnectTimeout bounds each host's attempt within a dial when the
	// connection string names several hosts (libpq's multi-host form,
	// host1:port1,host2:port2) and sets no connect_timeout. pgx tries the
	// hosts in order, and a host that accepts and never answers (a crashed
	// machine, a partition) would otherwise hold every dial for the whole
	// connect timeout, 2 minutes by default, before the next host is
	// tried: after a failover, the pool would not reach the new primary.
	// It bounds the host as a whole: every address its name resolves to,
	// and the name's lookup, together. A connect_timeout in the string,
	// which pgx (like libpq) applies to each address, takes precedence.
	// Default 2s; 0 leaves multi-host dials to the connect timeout.
	// Connection string: pool_host_connect_timeout.
	HostConnectTimeout time.Duration

	// RoleCheckPeriod is how often the pool looks again at the role of a
	// host it holds connections to, when the connection string names
	// several hosts or a target_session_attrs (see the package doc,
	// "Several hosts and failover"). For read-write or primary it asks the
	// server behind one idle connection (with Pipeline, a shared one when
	// no whole one is idle) whether it still takes writes: a
	// standby, or a primary fenced read-only while its sessions stay open,
	// makes the pool reset (Reset) before a caller's write is refused; a
	// busy pool, with no idle connection, skips the look and learns from
	// its first refused write instead. For read-only, standby,
	// prefer-standby and the read pool (Reads), one acquire per host and
	// period asks its connection's server, and a host that no longer
	// qualifies (promoted, or behind MaxStandbyLag) has its connections
	// closed; a pool that fell back to the primary looks for a standby
	// that qualifies again. Default 1s; 0 turns it off. Connection string:
	// pool_role_check_period.
	RoleCheckPeriod time.Duration

	// LoadBalanceHosts is libpq's load_balance_hosts (PostgreSQL 16):
	// LoadBalanceDisable (the default, "") tries the hosts of the
	// connection string in order on every dial; LoadBalanceRandom tries
	// them in a random order on each dial, which spreads the pool's
	// connections over the hosts that qualify for target_session_attrs.
	// Connection string: load_balance_hosts=disable|random.
	LoadBalanceHosts string

	// MaxStandbyLag bounds how far behind its primary a standby may be for
	// the read pool (Reads) to use it: a standby further behind takes no
	// new connections, and its connections close at their next acquire,
	// until it catches up; reads go to another standby, or to the primary.
	// The lag is the age of the last transaction the standby replayed
	// while it still has WAL received and not replayed, and 0 once it has
	// replayed all it received (an idle primary sends nothing to catch up
	// on); WAL the standby has not received it cannot count, so a standby
	// cut off from its primary (a partition, the primary gone) reads as
	// caught up with what it last received. (pg_stat_wal_receiver, which
	// would tell, shows its columns only to superusers and members of
	// pg_read_all_stats.) It is read at
	// each dial and, for a host with connections, at most once per
	// RoleCheckPeriod by an acquire. 0, the default, is no bound.
	// Connection string: pool_max_standby_lag.
	MaxStandbyLag time.Duration

	// ReadMaxConns is the read pool's MaxConns (Reads); its other settings
	// are the pool's. Default 0: the pool's MaxConns, which the pool's
	// SetMaxConns changes for the read pool too. Connection string:
	// pool_read_max_conns.
	ReadMaxConns int32

	// Logger receives the core's connection opens and closes (Debug), dial
	// failures and failed checks (Warn), and failed pings before a
	// connection is handed out (Warn), each line with a "pool" attribute
	// holding Name. nil means slog.Default(), as in every shoal pool;
	// slog.New(slog.DiscardHandler) silences the pool. Passwords never
	// reach it.
	Logger *slog.Logger

	// Observer is told of every acquire, release, dial, close, rejection,
	// timeout and leak, for metrics: pass a shoalprom or shoalotel pool's
	// metrics here. With Pipeline it hears the shared connections too, and
	// its gauges count both kinds as one pool, as Stat does. nil costs
	// nothing.
	Observer shoal.Observer

	// ReadObserver is the read pool's Observer (Reads): give it a metrics
	// pool of its own name, so that reads and writes count apart. nil
	// means none.
	ReadObserver shoal.Observer

	// PipelineObserver, with Pipeline, is told of the shared connections
	// alone, as a pool named Name + "/pipelined" whose leases are the
	// statements in flight: give it a metrics pool of that name to watch
	// how many share a connection. Observer counts the shared connections
	// with the whole ones either way. nil means none.
	PipelineObserver shoal.Observer

	// Budget, when set, is a limit on connections shared with pools in
	// other processes (shoaletcd.Budget keeps one in etcd): the pool asks
	// it for a permit before every dial, holds at most its share (and
	// never more than MaxConns), and, when the budget has a FenceKey,
	// fences every connection at the server with a session advisory lock
	// on its slot (see the package doc, "A budget shared by processes").
	// nil means MaxConns alone limits the pool. Not settable from the
	// connection string.
	Budget shoal.Budget

	// LeakThreshold reports a connection held longer than this, once, with
	// the stack of the code that acquired it (Logger, Observer,
	// Stat().Shoal().Leaked). 0 turns leak detection off.
	LeakThreshold time.Duration

	// parsed is set by ParseConfig; NewWithConfig refuses configs made
	// another way, as pgxpool does (with an error where pgxpool panics),
	// because the defaults above are applied by ParseConfig and a zero
	// MaxConns would mean something else.
	parsed bool
}

// The values of Config.LoadBalanceHosts.
const (
	LoadBalanceDisable = "disable" // the hosts in order, as "" does
	LoadBalanceRandom  = "random"  // the hosts in a random order on each dial
)

// ShouldPingParams are what Config.ShouldPing decides on: the connection
// about to be handed out and how long it sat idle in the pool (0 for one
// just dialled, or handed straight from its releaser to a waiting caller).
type ShouldPingParams struct {
	Conn         *pgx.Conn     // the connection about to be handed out
	IdleDuration time.Duration // how long it sat idle; 0 for one not idle
}

// defaultConfig returns a Config with pgxpool's defaults.
func defaultConfig(cc *pgx.ConnConfig) *Config {
	return &Config{
		ConnConfig:         cc,
		MaxConns:           int32(max(defaultMinMaxConns, runtime.NumCPU())),
		MaxConnLifetime:    defaultMaxConnLifetime,
		MaxConnIdleTime:    defaultMaxConnIdleTime,
		HealthCheckAfter:   defaultHealthCheckAfter,
		HealthCheckPeriod:  defaultHealthCheckPeriod,
		CancelTimeout:      defaultCancelTimeout,
		BargeWindow:        defaultBargeWindow,
		HostConnectTimeout: defaultHostConnectTimeout,
		RoleCheckPeriod:    defaultRoleCheckPeriod,
		PipelineFill:       defaultPipelineFill,
		parsed:             true,
	}
}

// Copy returns a deep copy of the config, safe to change without affecting
// c, except for the tls.Config, which must not be changed after use anyway.
func (c *Config) Copy() *Config {
	n := *c
	if c.ConnConfig != nil {
		n.ConnConfig = c.ConnConfig.Copy()
	}
	return &n
}

// ConnString returns the connection string the config was parsed from, as
// it was given to ParseConfig, pool_ keys included, as pgxpool's does. It
// holds the password exactly as the caller's own string does: keep it out
// of logs and errors (String and %v leave the password out). A Config with
// no ConnConfig returns "".
func (c *Config) ConnString() string {
	if c.ConnConfig == nil {
		return ""
	}
	return c.ConnConfig.ConnString()
}
