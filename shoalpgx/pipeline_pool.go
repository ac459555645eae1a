package shoalpgx

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
)

// pipePool is the pool of shared connections behind Config.Pipeline: a core
// pool in multiplexed mode, whose streams are the queries in flight on one
// connection, so that a new query goes to the least-loaded connection, and
// another connection is dialled as soon as every open one has a query in
// flight (BusyStreams 1): a backend runs one statement at a time, so a
// query queued behind another waits for it, where one more connection,
// within MaxConns, runs it at once. Queries share a connection, up to
// Pipeline on each, once every connection the pool may open is busy, or
// sooner while that connection answers them quickly (fill,
// pipeline_fill.go).
type pipePool struct {
	p    *Pool
	core *shoal.Pool[*pipeConn]
	qt   pgx.QueryTracer // ConnConfig.Tracer as one, or nil
	bt   pgx.BatchTracer // likewise
	sc   shareCache      // which statements may share a connection
	// tm is the type map of the shared connection dialled last: they are
	// all dialled alike, so it tells which arguments any of them would
	// describe (wholeFirst).
	tm atomic.Pointer[typeMap]

	// closing is set by close: from then on a connection whose callers
	// have all given up closes at once (pipeline_close.go).
	closing atomic.Bool

	load pipeLoad  // callers and connections, for fill
	reqs sync.Pool // requests given back for reuse (pipeline_recycle.go)

	mu   sync.Mutex
	open map[*pipeConn]struct{} // the connections open, for conns
}

// How MaxConns is divided between the pool's whole connections
// (transactions, Acquire, CopyFrom) and its shared ones: both core pools
// join one in-process budget of MaxConns connections (shoal.NewBudget),
// which shares it out by demand, max-min fairly, and never lets the two
// together hold more. The shared pool's minimum keeps two shared
// connections open (one when MaxConns is 2) so that new statements find an
// idle connection beside one busy with a slow statement while the next
// dial is under way.

// newDivision returns the budget the two kinds share, for a config with
// Pipeline on: with a Budget of the user's, joined to it too
// (pipeline_budget.go).
func newDivision(c *Config) (shoal.Budget, error) {
	b, err := shoal.NewBudget(int(c.MaxConns), shoal.BudgetName("shoalpgx pipeline"))
	if err != nil {
		return nil, fmt.Errorf("shoalpgx: dividing MaxConns: %w", err)
	}
	if c.Budget != nil {
		return &twoBudgets{division: b, user: c.Budget, members: map[shoal.BudgetMember]*twoShares{}}, nil
	}
	return b, nil
}

// sharedFloor is how many shared connections the pool keeps open: two, or
// fewer when MaxConns would leave no room for a whole connection beside
// them and the whole ones' MinConns (the budget grants each pool its
// minimum first, and a whole pool with none left would wait for ever);
// none under a Budget of the user's, which may be smaller than MaxConns.
func sharedFloor(c *Config) int {
	if c.Budget != nil {
		return 0
	}
	return max(min(2, int(c.MaxConns)-int(c.MinConns)-1), 0)
}

// checkPipeline checks the settings that pipelining depends on.
func checkPipeline(c *Config) error {
	switch {
	case c.Pipeline < 0:
		return &ConfigError{Key: "Pipeline", Reason: fmt.Sprintf("must be >= 0 (0 means off: every statement gets a whole connection), got %d", c.Pipeline)}
	case c.PipelineFill < 0:
		return &ConfigError{Key: "PipelineFill", Reason: fmt.Sprintf("must be >= 0 (0 spreads statements least-loaded first), got %s", c.PipelineFill)}
	case c.Pipeline == 0:
		return nil
	case c.MaxConns < 2:
		return &ConfigError{Key: "MaxConns", Reason: fmt.Sprintf("must be >= 2 with Pipeline (%d): the pool keeps a shared connection and room for a whole one, got %d", c.Pipeline, c.MaxConns)}
	case c.MinConns >= c.MaxConns-1:
		return &ConfigError{Key: "MinConns", Reason: fmt.Sprintf("must be < MaxConns-1 (%d) with Pipeline (%d): the pool keeps a shared connection beside them, got %d", c.MaxConns-1, c.Pipeline, c.MinConns)}
	}
	return nil
}

// newPipePool makes the shared connections' pool for p.
func newPipePool(p *Pool) (*pipePool, error) {
	c := p.config
	pp := &pipePool{p: p, open: map[*pipeConn]struct{}{}}
	pp.qt = c.ConnConfig.Tracer
	pp.bt, _ = c.ConnConfig.Tracer.(pgx.BatchTracer)
	cfg := shoal.Config[*pipeConn]{
		// The whole connections' pool's name, so that logs and metrics
		// tell the two apart and tie them together.
		Name:        pipelinedName(p.core.Stats().Name),
		Observer:    p.sharedCoreObserver(),
		Dial:        pp.dial,
		Close:       pp.closeConn,
		MaxConns:    int(c.MaxConns),
		MinConns:    sharedFloor(c),
		MaxStreams:  c.Pipeline,
		BusyStreams: busyStreams(c.Pipeline),
		Budget:      p.division,
		MaxWaiters:  c.MaxWaiters,
		MaxIdleTime: c.MaxConnIdleTime,
		MaxDialing:  c.MaxDialing,
		Logger:      c.Logger,
	}
	if c.PipelineFill > 0 && c.Pipeline > 1 {
		cfg.Fill = pp.fill
		cfg.Avoid = pp.stalled
	}
	if c.MaxConnLifetime > 0 {
		cfg.MaxLifetime = c.MaxConnLifetime
		cfg.LifetimeJitter = c.MaxConnLifetimeJitter
	}
	if p.lookAfter > 0 {
		// A statement about to go on a connection with none in flight
		// for that long has its socket looked at first (pipeline_idle.go).
		cfg.HealthCheck = pp.idleCheck
		cfg.HealthCheckAfter = p.lookAfter
	}
	cfg.Hooks.OnDisconnect = func(pc *pipeConn, _ shoal.Reason) {
		pc.pc.forget()
	}
	core, err := shoal.New(cfg)
	if err != nil {
		return nil, fmt.Errorf("shoalpgx: the pipelined connections' pool: %w", err)
	}
	pp.core = core
	return pp, nil
}

// busyStreams is the shared pool's BusyStreams: 1, so that statements
// spread before they share (see pipePool), where Pipeline allows sharing
// at all; with Pipeline 1 a shared connection carries one statement, and
// the core refuses BusyStreams for a connection of one stream.
func busyStreams(pipeline int) int {
	if pipeline > 1 {
		return 1
	}
	return 0
}

// dial opens a shared connection: dialled as any of the pool's, then
// taken over from pgx.
func (pp *pipePool) dial(ctx context.Context) (*pipeConn, error) {
	pc, err := pp.p.dialMarked(ctx)
	if err != nil {
		return nil, err
	}
	c, err := newPipeConn(pc, pp.p.config.ConnConfig.StatementCacheCapacity, pp.p.config.CancelTimeout)
	if err != nil {
		pc.forget()
		return nil, err
	}
	pp.mu.Lock()
	pp.open[c] = struct{}{}
	pp.mu.Unlock()
	pp.tm.Store(c.tm)
	pp.load.conns.Add(1)
	return c, nil
}

// wholeFirst reports whether a statement run as sm with args goes to a
// whole connection before a shared one is acquired for it: in
// CacheDescribe and DescribeExec, one with an argument that needs
// describing (pipeBuild.statement), so that the Observer hears of one
// acquire for it, as without pipelining. Before a shared connection is
// open it cannot tell, and the statement learns it from the one it takes.
func (pp *pipePool) wholeFirst(sm stmtMode, args []any) bool {
	if sm != modeDescribed {
		return false
	}
	tm := pp.tm.Load()
	return tm != nil && tm.describes(args)
}

// starved reports whether a statement had better go to a whole connection
// because the user's Budget grants the shared connections nothing and none
// is open: when the budget's minimums (this pool's MinConns among them) or
// the other pools hold all of it, a statement would wait for a shared
// connection until its context ended, beside the whole connections the
// pool holds idle. Without a Budget the division of MaxConns keeps room
// for a shared connection (checkPipeline). The share is read only while
// no shared connection is open, which costs a look at an empty pool.
func (pp *pipePool) starved() bool {
	return pp.p.config.Budget != nil && pp.load.conns.Load() == 0 && pp.core.Stats().Share == 0
}

// closeConn closes a shared connection for the core pool.
func (pp *pipePool) closeConn(c *pipeConn) error {
	pp.mu.Lock()
	delete(pp.open, c)
	pp.mu.Unlock()
	pp.load.conns.Add(-1)
	return c.close()
}

// run sends r on the shared connection the core picks (one filling, else
// the least-loaded; see fill) and waits for its answer or for ctx to end. A
// caller whose ctx ends returns at once with ctx's error; its request, if
// already written, is answered and dropped later, and its stream is given
// back only then, so that a connection never carries more than Pipeline
// requests. A request that nothing of reached the server, because its
// connection broke first, goes to another connection, within the pool's
// attempts, as an acquire's would, unless the pool is closing.
func (pp *pipePool) run(ctx context.Context, r *pipeReq, sm stmtMode, encode pipeEncoder) error {
	pp.load.callers.Add(1)
	defer pp.load.callers.Add(-1)
	for attempt, refused := 0, 0; ; {
		l, err := pp.core.Acquire(ctx)
		if err != nil {
			return err
		}
		c := l.Value()
		if !pp.admit(ctx, l) {
			// Retired, or looked at for its host's role: another
			// acquire, within the pool's attempts (pipeline_admit.go).
			if refused++; refused >= pp.p.attempts {
				return errPipeAdmit
			}
			continue
		}
		b := &r.build
		*b = pipeBuild{c: c, mode: sm, preps: b.preps[:0], closes: b.closes[:0], named: b.named[:0]}
		buf, err := encode(b, r.buf[:0])
		broke := false
		for b.describeFirst {
			// What was built goes unsent, whatever its error: its
			// deallocations go with the request built again once the
			// preparations are in.
			b.closesUnsent()
			b.release()
			if err = pp.describeFirst(ctx, l, b); err != nil {
				broke = true
				break
			}
			*b = pipeBuild{c: c, mode: sm, preps: b.preps[:0], closes: b.closes[:0], named: b.named[:0], described: b.described + 1}
			buf, err = encode(b, r.buf[:0])
		}
		if broke {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if attempt++; attempt < pp.p.attempts {
				continue // its connection broke: l is discarded
			}
			return err
		}
		if err != nil {
			b.unsent()
			l.Release()
			return err
		}
		r.buf = buf
		r.lease = l
		err = c.send(ctx, b.preps, r)
		b.release() // queued, or its connection broke
		if err != nil {
			// Broken before r was queued (after the core's look at
			// an idle one, pipeline_idle.go).
			l.Discard()
			if attempt++; attempt < pp.p.attempts {
				continue
			}
			return err
		}
		if err := pp.await(ctx, r); err != nil || !r.unsent {
			return err
		}
		// Failed with its connection while still in its queue
		// (failLocked, failWriteLocked): the server never saw it. Not
		// while the pool closes: the connections are being emptied,
		// and one whose abandoned statements are being cancelled
		// (dropAbandoned) could take it.
		if attempt++; attempt >= pp.p.attempts || pp.closing.Load() {
			return nil // the connection's error, in r
		}
		r.again()
	}
}

// await waits for the answer to r, sent, or for ctx to end (see run), and
// ends r's lease.
func (pp *pipePool) await(ctx context.Context, r *pipeReq) error {
	if err := pp.wait(ctx, r); err != nil {
		return err
	}
	r.endLease()
	return nil
}

// wait is await without ending r's lease once r is answered, for a caller
// that goes on under it (describeFirst). When ctx ends first, r is
// abandoned: its lease ends here if r was still queued, else when its
// answer comes.
func (pp *pipePool) wait(ctx context.Context, r *pipeReq) error {
	r.conn.readFor(ctx, r)
	select {
	case <-r.ready:
	case <-ctx.Done():
		if r.state.CompareAndSwap(reqWaiting, reqAbandoned) {
			unqueued := r.conn.unqueue(r)
			if unqueued {
				r.build.closesUnsent()
				r.endLease()
			}
			if pp.closing.Load() {
				if !unqueued {
					// Not on the caller's time: the cancel request dials.
					go r.conn.dropAbandoned()
				}
			} else {
				// Unqueued too: it may have been the last caller
				// waiting behind a quiet statement.
				r.conn.watchAbandoned()
			}
			return ctx.Err()
		}
		<-r.ready
	}
	return nil
}

// setMaxConns is Pool.SetMaxConns with pipelining. The budget the two
// kinds share stays at the MaxConns the pool was made with, so n is
// divided in halves between them, the odd one to the whole connections:
// the two never hold more than n, and never more than that MaxConns.
// Its caller holds the pool's maxMu: the halves are set one after the
// other, and racing calls would otherwise leave one call's half beside
// another's.
func (pp *pipePool) setMaxConns(n int32) error {
	if n < 2 {
		return fmt.Errorf("shoalpgx pool %q: SetMaxConns(%d): must be >= 2 with Pipeline (%d): the pool keeps connections of both kinds", pp.p.config.Name, n, pp.p.config.Pipeline)
	}
	shared := int(n) / 2
	if err := pp.core.SetMaxConns(shared); err != nil {
		return fmt.Errorf("shoalpgx: %w", err)
	}
	if err := pp.p.core.SetMaxConns(int(n) - shared); err != nil {
		return fmt.Errorf("shoalpgx: %w", err)
	}
	return nil
}

// pipeEncoder appends a request's messages to buf, encoding its arguments
// with the type map of the connection it will go on, b.c.
type pipeEncoder func(b *pipeBuild, buf []byte) ([]byte, error)

// close closes the shared connections, waiting for those in use: for
// their callers, not for statements whose callers have given up
// (dropAbandoned, on every connection at once).
func (pp *pipePool) close() {
	pp.closing.Store(true)
	var wg sync.WaitGroup
	for _, c := range pp.conns() {
		wg.Go(c.dropAbandoned)
	}
	wg.Wait()
	_ = pp.core.Close(context.Background())
}

// conns returns the shared connections open now.
func (pp *pipePool) conns() []*pipeConn {
	pp.mu.Lock()
	defer pp.mu.Unlock()
	out := make([]*pipeConn, 0, len(pp.open))
	for c := range pp.open {
		out = append(out, c)
	}
	return out
}
