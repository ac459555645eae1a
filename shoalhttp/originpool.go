package shoalhttp

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal"
)

// pooledConn is what the code both protocols share asks of a connection:
// h1Conn and h2Conn, used through their pointers.
type pooledConn[E any] interface {
	*E
	close() error
	connInfo() ConnInfo
}

// originPool is what the HTTP/1.1 and HTTP/2 backends share: the origin's
// core pool, wired once from Options, the probe's connection that the
// pool's first dial hands over, and the traces of the requests waiting for
// a dial. Each backend adds its protocol's settings, hooks and dial.
type originPool[E any, C pooledConn[E]] struct {
	o    *origin
	pool *shoal.Pool[C]
	// seed is the probe's connection, handed to the pool by its first dial.
	seed atomic.Pointer[E]
	// seedTook is the probe's dial in nanoseconds, stored as the seed is
	// handed over, for the Observer to add to that dial (withSeedDial).
	seedTook atomic.Int64
	traces   dialTraces // of the requests waiting for a connection
	// floor is the larger of the pool's MinIdle and MinConns: what warm
	// waits for.
	floor int
	// budget is the pool's part of Options.MaxConnsTotal; nil without it.
	budget *originBudget
}

// open builds the pool: the Options both protocols share (poolConfig),
// OnConnect and OnDisconnect reporting each connection's ConnInfo, then
// the protocol's own settings and hooks (protocol), with the origin's
// MaxConns if Transport.SetMaxConns set one. The first dial returns seed
// when it is not nil; later ones call dial, with a context that carries
// the traces of the requests waiting. When the pool cannot be built, seed
// is closed.
func (p *originPool[E, C]) open(o *origin, seed C, dial func(context.Context) (C, error), protocol func(*shoal.Config[C])) error {
	p.o = o
	if seed != nil {
		p.seed.Store(seed)
	}
	seedTook := o.seedTook
	o.seedTook = 0
	opts := o.t.opts
	cfg := poolConfig(opts, o.name, func(ctx context.Context) (C, error) {
		if c := p.seed.Swap(nil); c != nil {
			p.seedTook.Store(int64(seedTook))
			return c, nil
		}
		return dial(p.traces.dialContext(ctx))
	}, C.close)
	if seed != nil && cfg.Observer != nil {
		cfg.Observer = withSeedDial(cfg.Observer, &p.seedTook)
	}
	if opts.OnConnect != nil {
		cfg.Hooks.OnConnect = func(_ context.Context, c C) error {
			opts.OnConnect(c.connInfo())
			return nil
		}
	}
	if opts.OnDisconnect != nil {
		cfg.Hooks.OnDisconnect = func(c C, r shoal.Reason) { opts.OnDisconnect(c.connInfo(), r) }
	}
	// The pool starts at the origin's limit, if SetMaxConns set one, from
	// its first dial on (InitialMaxConns), and is made with a MaxConns
	// that holds its floors: an explicit MinConns or MinIdle up to
	// Options.MaxConns, and the HTTP/2 default of two, stay the pool's,
	// kept up to the limit and back in full once SetMaxConns raises it.
	limit := cfg.MaxConns
	if n := int(o.maxConns.Load()); n > 0 {
		limit = n
	}
	protocol(&cfg)
	cfg.MaxConns = max(cfg.MaxConns, limit, cfg.MinConns)
	if limit < cfg.MaxConns {
		cfg.InitialMaxConns = limit
	}
	p.floor = max(cfg.MinIdle, cfg.MinConns)
	if f := o.t.first; f != nil {
		p.budget = &originBudget{first: f, name: o.name, min: max(opts.MinConns, 0)}
		if sp := o.seedPermit; sp != nil {
			p.budget.seed.Store(&sp)
			o.seedPermit = nil
		}
		if o.seedMin {
			p.budget.reserved.Store(true)
			o.seedMin = false
		} else if p.budget.min > 0 {
			// A pool made without a probe (plain HTTP/1.1) claims its
			// minimum here.
			if err := f.reserve(o.name, p.budget.min, opts.MaxConnsTotal); err != nil {
				if seed != nil {
					seed.close()
				}
				p.budget.dropSeed()
				return err
			}
			p.budget.reserved.Store(true)
		}
		cfg.Budget = p.budget
	}
	pool, err := shoal.New(cfg)
	if err != nil {
		if seed != nil {
			seed.close()
		}
		if p.budget != nil {
			p.budget.dropSeed()
			p.budget.unreserve()
		}
		return err
	}
	p.pool = pool
	return nil
}

// acquire takes a connection for one attempt at req (see acquireTraced).
// A failure ends the request (see acquireErr).
func (p *originPool[E, C]) acquire(req *http.Request, tr *reqTrace, attempt int, since time.Time) (shoal.Lease[C], error) {
	lease, err := acquireTraced(req.Context(), p.pool, &p.traces, tr, p.o.hop, attempt, since)
	if err != nil {
		return lease, acquireErr(req, attempt, err)
	}
	return lease, nil
}

// acquireErr ends a request whose acquire failed. A pool closed under the
// first attempt (by CloseIdleConnections) is marked errOriginClosed, and
// the body left alone, so that RoundTrip can look the origin up again and
// send the same request; otherwise the body is closed, as a RoundTripper
// must.
func acquireErr(req *http.Request, attempt int, err error) error {
	if attempt == 0 && errors.Is(err, shoal.ErrClosed) {
		return fmt.Errorf("%w: %w", errOriginClosed, err)
	}
	closeRequestBody(req)
	return err
}

func (p *originPool[E, C]) warm(ctx context.Context) error { return warmPool(ctx, p.pool, p.floor) }

func (p *originPool[E, C]) stats() shoal.Stats { return p.pool.Stats() }

func (p *originPool[E, C]) setMaxConns(n int) error { return p.pool.SetMaxConns(n) }

func (p *originPool[E, C]) close(ctx context.Context) error {
	if c := C(p.seed.Swap(nil)); c != nil {
		c.close()
	}
	err := p.pool.Close(ctx)
	if p.budget != nil {
		p.budget.dropSeed() // after the seed's close: its permit covered it
	}
	return err
}
