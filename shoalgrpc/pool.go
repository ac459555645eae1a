package shoalgrpc

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/shoalpool/shoal"
	"google.golang.org/grpc"
)

// Pool is a pool of grpc.ClientConns to one target that spreads calls over
// them by load. It is safe for concurrent use. Create one with NewClient
// and close it with Close.
type Pool struct {
	pool        *shoal.Pool[*conn]
	target      string // as given; may hold credentials, never printed
	shownTarget string // target with any credentials removed
	// redactor masks the target's credentials in error messages, built
	// once here since dials run concurrently.
	redactor      *strings.Replacer
	dialOpts      []grpc.DialOption
	discoverLimit bool
	// canonicalTarget is the target as grpc-go resolves it
	// ("dns:///host:port"), may hold credentials, never printed.
	canonicalTarget string
	maxStreams      int
	netDial         func(ctx context.Context, c *conn, network, address string) (net.Conn, error)
	// failCC is the failure channel (failcall.go): the calls the pool
	// fails go through it, so that the dial options' interceptors and
	// stats handlers see them. Close closes it once no call that entered
	// the pool before Close is left waiting.
	failCC *grpc.ClientConn

	// The Options' interceptors chained around invoke and newStream; nil
	// when there are none.
	unary  grpc.UnaryInvoker
	stream grpc.Streamer

	mu    sync.Mutex
	conns map[*conn]struct{} // open connections, for readiness look-ups

	// The calls running in the pool's code or grpc-go's, not in a dial
	// option's interceptor, for Close to wait for; callsOut is signalled
	// when the count falls to 0 after closing is set (calls.go).
	calls    atomic.Int64
	closing  atomic.Bool
	callsOut chan struct{}
	// streamsCtx ends at Close, and the context of every stream with it:
	// a stream whose slot waits for a retry that may still come would
	// otherwise hold Close (stream.go).
	streamsCtx context.Context
	endStreams context.CancelFunc

	// For GetState: whether the latest dial failed, and whether Close
	// has begun.
	lastDialFailed atomic.Bool
	closed         atomic.Bool

	closeOnce sync.Once
	closeErr  error
}

// Pool is a drop-in grpc.ClientConnInterface for generated clients.
var _ grpc.ClientConnInterface = (*Pool)(nil)

// NewClient returns a pool of connections to target, each created with
// grpc.NewClient(target, dialOpts...). Like grpc.NewClient it does not
// connect: the first call (or Options.MinConns) does. It fails when opts
// cannot work, naming the field, and when grpc.NewClient refuses target
// and dialOpts (no transport credentials, per-call credentials that need a
// secure transport over an insecure one, a target it cannot parse, ...),
// with grpc-go's words for the problem.
func NewClient(target string, opts Options, dialOpts ...grpc.DialOption) (*Pool, error) {
	if err := opts.check(); err != nil {
		return nil, err
	}
	opts = opts.withDefaults()
	p := &Pool{
		target:      target,
		shownTarget: redactTarget(target),
		redactor:    quotedPieces(target),
		dialOpts:    append([]grpc.DialOption(nil), dialOpts...),
		maxStreams:  opts.MaxStreams,
		conns:       make(map[*conn]struct{}),
		netDial:     netDial,
		callsOut:    make(chan struct{}, 1),
	}
	p.streamsCtx, p.endStreams = context.WithCancel(context.Background())
	p.discoverLimit = !opts.IgnoreServerStreamLimit && !proxyConfigured()
	// The dial options, judged by grpc-go once now, as each connection
	// will judge them, with the pool's context dialer among them.
	dialOptsChecked := p.connOpts(&conn{netDial: p.netDial})
	canonicalTarget, err := checkDialOptions(target, dialOptsChecked)
	if err != nil {
		return nil, p.redact(fmt.Errorf("shoalgrpc: NewClient(%s): the dial options do not work: %w", p.shownTarget, err))
	}
	p.canonicalTarget = canonicalTarget
	failCC, err := newFailChannel(target, targetScheme(canonicalTarget), dialOptsChecked)
	if err != nil {
		return nil, p.redact(fmt.Errorf("shoalgrpc: NewClient(%s): %w", p.shownTarget, err))
	}
	p.failCC = failCC
	name := opts.Name // the core masks a password in it (shoal.Config.Name)
	if name == "" {
		name = p.shownTarget
	}
	pool, err := shoal.New(shoal.Config[*conn]{
		Name:           name,
		Dial:           p.dial,
		Close:          p.closeConn,
		MaxConns:       opts.MaxConns,
		MinConns:       opts.MinConns,
		MaxStreams:     opts.MaxStreams,
		MaxLifetime:    opts.MaxLifetime,
		LifetimeJitter: opts.LifetimeJitter,
		MaxIdleTime:    opts.MaxIdleTime,
		DialTimeout:    opts.DialTimeout,
		MaxDialing:     opts.MaxDialing,
		MaxWaiters:     opts.MaxWaiters,
		Logger:         opts.Logger,
		Observer:       opts.Observer,
		LeakThreshold:  opts.LeakThreshold,
		Budget:         opts.Budget,
		Hooks: shoal.Hooks[*conn]{
			// The limit the server advertised, when it was read before
			// the connection joined: applied before its first stream.
			StreamLimit: func(c *conn) int { return int(c.serverLimit.Load()) },
		},
	})
	if err != nil {
		_ = failCC.Close()
		var ce *shoal.ConfigError
		if errors.As(err, &ce) {
			// The fields passed through keep their names in Options.
			return nil, &shoal.ConfigError{Struct: "shoalgrpc.Options", Field: ce.Field, Reason: ce.Reason}
		}
		return nil, fmt.Errorf("shoalgrpc: %w", err)
	}
	p.pool = pool
	if len(opts.UnaryInterceptors) > 0 {
		p.unary = chainUnary(opts.UnaryInterceptors, p.invoke)
	}
	if len(opts.StreamInterceptors) > 0 {
		p.stream = chainStream(opts.StreamInterceptors, p.newStream)
	}
	return p, nil
}

// proxyConfigured reports whether grpc-go would dial through an HTTPS
// proxy, which it skips when a context dialer is installed.
func proxyConfigured() bool {
	return os.Getenv("HTTPS_PROXY") != "" || os.Getenv("https_proxy") != ""
}

// SetMaxConns changes the most grpc.ClientConns open at once while the pool
// runs (see shoal.Pool.SetMaxConns): growing serves waiting calls with new
// connections at once; shrinking retires the least-loaded connections, which
// close when their last call or stream ends, and never fails a call. n must
// be in [1, math.MaxInt32].
func (p *Pool) SetMaxConns(n int) error {
	if err := p.pool.SetMaxConns(n); err != nil {
		return fmt.Errorf("shoalgrpc: %w", err)
	}
	return nil
}

// Stats returns a snapshot of the pool: connections, streams in use
// (Leases), callers waiting, dials, closes.
func (p *Pool) Stats() shoal.Stats { return p.pool.Stats() }

// Close closes every connection, like grpc.ClientConn.Close: calls and
// streams in flight fail with codes.Canceled, and later calls fail at once.
// It returns when every connection is closed and every goroutine of the
// pool has ended. Calling it again returns the first call's result. Like
// grpc.ClientConn.Close it does not wait for an interceptor given as a dial
// option that is still running (a rate limiter, a token fetch): the call
// fails with codes.Canceled when the interceptor goes on to send it, and
// gives its stream slot back when the interceptor returns, which is when
// the pool's last goroutines end.
func (p *Pool) Close() error {
	p.closeOnce.Do(func() {
		p.closed.Store(true)
		p.closing.Store(true)
		// Stop new calls, fail those waiting and close idle connections
		// now. A canceled context makes Close return without waiting for
		// busy connections...
		done, cancel := context.WithCancel(context.Background())
		cancel()
		_ = p.pool.Close(done)
		// ...which are closed here, failing what runs on them.
		p.mu.Lock()
		busy := make([]*conn, 0, len(p.conns))
		for c := range p.conns {
			busy = append(busy, c)
		}
		p.mu.Unlock()
		for _, c := range busy {
			_ = c.cc.Close()
		}
		p.endStreams()
		// Every call but those in a dial option's interceptor now ends at
		// once: the calls failed while they waited go through the failure
		// channel (tracers see them, as they see grpc-go's own calls failed
		// by its Close) before it closes, and the others give their
		// streams back.
		p.waitCallsOut()
		_ = p.failCC.Close()
		// With no stream held, the core pool finishes closing the
		// connections; a stream held by an interceptor that is still
		// running lets it finish when the interceptor returns.
		if p.pool.Stats().Leases == 0 {
			p.closeErr = p.pool.Close(context.Background())
		}
	})
	return p.closeErr
}

// String describes the pool for logs, without any credentials in the target.
func (p *Pool) String() string {
	s := p.pool.Stats()
	return fmt.Sprintf("shoalgrpc.Pool(%s, %d conns, %d streams in use, %d waiting)",
		p.shownTarget, s.TotalConns, s.Leases, s.Waiting)
}

// track and untrack keep the set of open connections.
func (p *Pool) track(c *conn) {
	p.mu.Lock()
	p.conns[c] = struct{}{}
	p.mu.Unlock()
}

func (p *Pool) untrack(c *conn) {
	p.mu.Lock()
	delete(p.conns, c)
	p.mu.Unlock()
}
