package shoalpgx

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/namemask"
	"github.com/shoalpool/shoal/internal/peek"
)

// Pool is a pool of PostgreSQL connections. It is safe for concurrent use.
// Create it with New or NewWithConfig and close it with Close.
type Pool struct {
	core *shoal.Pool[*pooledConn]
	// ready is core once NewWithConfig has set it: dials that New starts
	// (MinConns, a Budget's first share) may run before, and the fence's
	// look before a dial reads the pool through it.
	ready  atomic.Pointer[shoal.Pool[*pooledConn]]
	config *Config

	// Set by NewWithConfig from config, read on every acquire and release.
	prepareConn     func(context.Context, *pgx.Conn) (bool, error) // PrepareConn, or BeforeAcquire wrapped; nil for none
	acquireTracer   AcquireTracer                                  // from ConnConfig.Tracer; nil for none
	releaseTracer   ReleaseTracer                                  // likewise
	attempts        int                                            // connections one acquire tries: MaxConns+1, as pgxpool
	lookAfter       time.Duration                                  // the idleness after which healthCheck looks at the socket; 0: never
	resetOnReadOnly bool                                           // SQLSTATE 25006 resets the pool (hosts_failover.go)
	target          target                                         // what a host must be (hosts_target.go)
	maxLag          time.Duration                                  // the read pool's bound on a standby's lag; 0: none
	loadBalance     bool                                           // load_balance_hosts=random
	hosts           *hostSet                                       // per host: open connections, role (hosts_state.go)
	recheck         bool                                           // acquires look at a host's role again (hosts_recheck.go)
	stagger         time.Duration                                  // a dial's wait for a host before the next one; 0: hostStagger
	// betweenLagReadings, when a test sets it, runs between the two
	// readings of a lag check (readRole), so that the test can change
	// the standby's lag in between.
	betweenLagReadings func()
	// beforeRoleQuery, when a test sets it, runs in checkRole once it has
	// taken its connection, before the query, so that the test can reset
	// the pool while the look is under way.
	beforeRoleQuery func()
	// refusalRole, when a test sets it, changes what the look after a
	// refused write found (refusesWrites), so that a server made to refuse
	// writes by a function stands for a fenced one.
	refusalRole func(role) role

	resets   atomic.Uint64          // Reset calls, for noteErr
	lastHost atomic.Pointer[string] // host:port of the last staggered dial, for noteHost
	cleanups sync.WaitGroup         // pgx's cleanups of connections it closed itself, past cleanupHold (closeOrLeave)
	roleStop chan struct{}          // closed by Close: watchRole stops (nil without it)
	roleDone chan struct{}          // closed when watchRole has returned
	roleOnce sync.Once              // Close may be called more than once

	fallbackOpen atomic.Int64 // connections on a host used only as a fallback (hosts_fallback.go)

	pipe     *pipePool    // the shared connections of Config.Pipeline; nil without it
	division shoal.Budget // how the whole and the shared connections divide MaxConns (pipeline_pool.go)
	// sharedCore is pipe.core, for the Observer's gauges, which a
	// scrape may read while New is still making it (pipeline_observe.go).
	sharedCore atomic.Pointer[shoal.Pool[*pipeConn]]

	maxMu sync.Mutex // held by SetMaxConns while it resizes the pool's parts and its read pool

	readsMu     sync.Mutex
	reads       *ReadPool // made by the first Reads
	readsClosed bool      // set by Close: Reads makes no pool after it
	readsMax    int32     // the pool's MaxConns from SetMaxConns, for a read pool without ReadMaxConns; 0: none yet
}

// New parses connString with ParseConfig and returns a pool for it. See
// NewWithConfig.
func New(ctx context.Context, connString string) (*Pool, error) {
	cfg, err := ParseConfig(connString)
	if err != nil {
		return nil, err
	}
	return NewWithConfig(ctx, cfg)
}

// NewWithConfig returns a pool for cfg, which must come from ParseConfig
// (its defaults are set there). It checks every setting and names the first
// wrong one. It does not connect: MinConns/MinIdleConns connections are
// dialled in the background, and connection errors show on the first
// Acquire (call Ping to check the server). ctx is not used after
// NewWithConfig returns; it is accepted for pgxpool's signature.
func NewWithConfig(ctx context.Context, cfg *Config) (*Pool, error) {
	if cfg == nil || !cfg.parsed {
		return nil, &ConfigError{Key: "Config", Reason: "must be created by ParseConfig"}
	}
	if cfg.ConnConfig == nil {
		return nil, &ConfigError{Key: "ConnConfig", Reason: "is required"}
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	cfg = cfg.Copy()
	return newPool(cfg, targetOf(cfg.ConnConfig.ValidateConnect))
}

// newPool is NewWithConfig for a checked copy of a config, with the target
// its hosts must meet: the connection string's, or the read pool's.
func newPool(cfg *Config, t target) (*Pool, error) {
	if cfg.Name == "" {
		cfg.Name = defaultName(cfg.ConnConfig)
	}
	cfg.Name = namemask.Mask(cfg.Name) // as the core's (shoal.Config.Name)
	p := &Pool{config: cfg, attempts: int(cfg.MaxConns) + 1, target: t}
	p.resetOnReadOnly = resetsOnReadOnly(t, cfg.ConnConfig)
	if t == targetReads {
		p.maxLag = cfg.MaxStandbyLag
	}
	p.loadBalance = cfg.LoadBalanceHosts == LoadBalanceRandom
	p.hosts = newHostSet(hostAddrs(cfg.ConnConfig))
	p.recheck = rechecks(p.target, cfg.RoleCheckPeriod)
	p.prepareConn = cfg.PrepareConn
	if p.prepareConn == nil && cfg.BeforeAcquire != nil {
		hook := cfg.BeforeAcquire
		p.prepareConn = func(ctx context.Context, conn *pgx.Conn) (bool, error) { return hook(ctx, conn), nil }
	}
	p.acquireTracer, _ = cfg.ConnConfig.Tracer.(AcquireTracer)
	p.releaseTracer, _ = cfg.ConnConfig.Tracer.(ReleaseTracer)
	coreCfg, err := p.coreConfig()
	if err != nil {
		return nil, err
	}
	core, err := shoal.New(coreCfg)
	if err != nil {
		return nil, fmt.Errorf("shoalpgx: %w", err)
	}
	p.core = core
	p.ready.Store(core)
	if cfg.Pipeline > 0 {
		if p.pipe, err = newPipePool(p); err != nil {
			_ = core.Close(context.Background())
			return nil, err
		}
		p.sharedCore.Store(p.pipe.core)
	}
	if cfg.RoleCheckPeriod > 0 && (p.resetOnReadOnly || t.fallsBack()) {
		p.roleStop, p.roleDone = make(chan struct{}), make(chan struct{})
		go p.watchRole(cfg.RoleCheckPeriod)
	}
	return p, nil
}

// Close closes the pool: new acquires fail with shoal.ErrClosed, idle
// connections close now, and Close blocks until every acquired connection
// has been released and closed, as pgxpool's does.
func (p *Pool) Close() {
	// pgxpool's Close has no deadline, and neither has this wait.
	_ = p.close(context.Background())
}

// close closes the pool as Close does, waiting within ctx, for
// Group.Close. When ctx ends first every part of the pool is closed all
// the same, the rest of its connections close as their leases end, and
// the error wraps ctx's and says what was still held (a *shoal.CloseError
// for the leases).
func (p *Pool) close(ctx context.Context) error {
	p.refuseNew()
	errs := []error{p.closeReads(ctx)}
	if p.roleStop != nil {
		p.roleOnce.Do(func() { close(p.roleStop) })
		errs = append(errs, p.waitClosing(ctx, "its role watcher", func() { <-p.roleDone }))
	}
	if p.pipe != nil {
		errs = append(errs, p.waitClosing(ctx, "its pipelined connections", p.pipe.close))
	}
	errs = append(errs, p.core.Close(ctx))
	errs = append(errs, p.waitClosing(ctx, "pgx's cleanups of connections it closed", p.cleanups.Wait))
	return errors.Join(errs...)
}

// refuseNew makes the pool's parts and its read pool's fail new acquires
// with shoal.ErrClosed, without waiting for anything: close then waits for
// the parts one by one, and one still draining (a read connection held)
// must not leave the others handing out connections meanwhile.
func (p *Pool) refuseNew() {
	p.readsMu.Lock()
	r := p.reads
	p.readsClosed = true
	p.readsMu.Unlock()
	if r != nil {
		r.p.refuseNew()
	}
	now, cancel := context.WithCancel(context.Background())
	cancel()
	if p.pipe != nil {
		_ = p.pipe.core.Close(now) // a core's Close marks it closed first, then waits
	}
	_ = p.core.Close(now)
}

// waitClosing runs wait, a part of closing with no deadline of its own,
// and waits for it within ctx; if ctx ends first, wait goes on alone and
// the error names what (what) was still closing.
func (p *Pool) waitClosing(ctx context.Context, what string, wait func()) error {
	done := make(chan struct{})
	go func() { wait(); close(done) }()
	select {
	case <-done:
		return nil
	case <-ctx.Done():
		select {
		case <-done: // both were ready: the wait did finish
			return nil
		default:
		}
		return fmt.Errorf("shoalpgx pool %q: close: %w while waiting for %s", p.config.Name, ctx.Err(), what)
	}
}

// Reset closes every connection: idle ones now, acquired ones when they
// are released, and one whose dial was under way at the reset as it
// lands, before anyone has it. The pool stays open and dials anew, as
// pgxpool's Reset does (after a failover or a credential rotation, say).
// With several hosts in the connection string the pool resets itself on
// a sign that the primary has moved (see the package doc, "Several hosts
// and failover"). The read pool (Reads) has a Reset of its own.
func (p *Pool) Reset() {
	p.resets.Add(1)
	p.core.Reset()
	if p.pipe != nil {
		p.pipe.core.Reset()
	}
}

// Config returns a copy of the config the pool was created with, its Name
// the pool's own when it was left empty.
func (p *Pool) Config() *Config { return p.config.Copy() }

// pooledConn is the value the core pool holds for one connection: the pgx
// connection and what shoalpgx keeps beside it. Only the holder of its lease
// touches it, so it needs no lock.
type pooledConn struct {
	conn  *pgx.Conn
	pool  *Pool
	lease shoal.Lease[*pooledConn] // the core's lease on this connection, set at each acquire

	// resetGen is the pool's count of resets when the connection was
	// dialled; see noteErr.
	resetGen uint64

	// Where the connection is: its host, that host's epoch when it was
	// dialled (a later one retires it: hostState.retire), and what the
	// host was then.
	host      *hostState
	hostEpoch uint64
	role      role // as judged at the dial or the last look; see judged
	judged    bool // role was read (hosts_dial.go, hosts_recheck.go)
	// fallback is whether it is on a host the target uses only when none
	// qualifies (hosts_fallback.go): fallbackNo, fallbackYes or, once it
	// closed, fallbackGone. Atomic: a shared connection's role look and
	// its close run under different leases.
	fallback atomic.Int32

	// The idle check (health.go): a non-blocking look at the socket, and
	// what it found for the acquire to act on (acquire.go), which clears
	// both: how long the connection sat idle, and whether only a ping can
	// tell whether it is alive.
	peek     peek.Peeker
	idle     time.Duration
	mustPing bool

	// cancel is the connection's context handler when it is the pool's
	// own (cancel.go), nil otherwise: a connection with a cancel request
	// in flight is held back until the request can no longer land.
	cancel *canceler

	// fence is the budget slot whose advisory lock the session holds
	// (fence.go), so that Hijack, which gives the slot back to the budget,
	// lets go of it; nil when the pool does not fence.
	fence *fenceLock

	// unused marks a connection given back by the pool's own acquire, one
	// its caller never got, so that AfterRelease skips it (lifecycle.go).
	unused bool

	// refused marks a write of this connection's refused with SQLSTATE
	// 25006 whose server is still to be asked whether it refuses writes
	// itself (noteErr, hosts_failover.go). Only its holder touches it.
	refused bool

	// Wrappers handed to callers are carved out of these blocks, so that
	// handing one out rarely allocates; each is handed out once and never
	// reused, so a stale wrapper (a Rows closed twice, a Conn released
	// twice) can never touch a later holder's work.
	conns []Conn
	rows  []poolRows
	row   []poolRow
}

// wrapperBlock is how many wrappers of a kind are allocated at once.
const wrapperBlock = 32
