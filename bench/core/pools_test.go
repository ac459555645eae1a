package core

import (
	"context"
	"database/sql"
	"fmt"
	"sync/atomic"

	"github.com/jackc/puddle/v2"
	"github.com/shoalpool/shoal"
	"vitess.io/vitess/go/pools/smartconnpool"
)

// poolSize is the number of connections every pool under test holds.
const poolSize = 8

// benchPool is one pool under test, reduced to the two calls a benchmark
// times. H is whatever the pool hands out (a lease, a resource, a
// connection). Every pool is driven through this interface, so each pays
// the same two indirect calls per operation.
type benchPool[H any] interface {
	acquire(ctx context.Context) (H, error)
	release(h H)
	// waits is the pool's own count of acquires that found no idle
	// connection and had to wait, or -1 when the pool keeps no such count.
	waits() int64
	// close closes the pool and waits for its goroutines; it reports
	// anything that went wrong during the run.
	close() error
}

// noopConn is the connection every pool manages: nothing to do, nothing to
// close. dials counts how many were made, so a run can check that no pool
// redialled while it was being timed.
type noopConn struct {
	id int64
}

type connCounter struct{ dials atomic.Int64 }

func (c *connCounter) dial(context.Context) (*noopConn, error) {
	return &noopConn{id: c.dials.Add(1)}, nil
}

// warm acquires poolSize handles at once, then releases them all, so the
// pool has opened every connection before timing starts.
func warm[H any](ctx context.Context, p benchPool[H]) error {
	held := make([]H, 0, poolSize)
	defer func() {
		for _, h := range held {
			p.release(h)
		}
	}()
	for range poolSize {
		h, err := p.acquire(ctx)
		if err != nil {
			return fmt.Errorf("warm-up: %w", err)
		}
		held = append(held, h)
	}
	return nil
}

// checkDials reports a pool that dialled more than poolSize connections:
// it closed some while being timed, which no benchmark here asks for.
func checkDials(c *connCounter) error {
	if n := c.dials.Load(); n != poolSize {
		return fmt.Errorf("%d connections dialled, want %d", n, poolSize)
	}
	return nil
}

// --- shoal

type shoalPool struct {
	pool  *shoal.Pool[*noopConn]
	conns *connCounter
}

func openShoal(partitions int) func(context.Context) (benchPool[shoal.Lease[*noopConn]], error) {
	return func(ctx context.Context) (benchPool[shoal.Lease[*noopConn]], error) {
		conns := new(connCounter)
		pool, err := shoal.New(shoal.Config[*noopConn]{
			Dial:       conns.dial,
			MaxConns:   poolSize,
			Partitions: partitions,
		})
		if err != nil {
			return nil, err
		}
		p := &shoalPool{pool: pool, conns: conns}
		if err := warm(ctx, p); err != nil {
			pool.Close(ctx)
			return nil, err
		}
		return p, nil
	}
}

func (p *shoalPool) acquire(ctx context.Context) (shoal.Lease[*noopConn], error) {
	return p.pool.Acquire(ctx)
}

func (p *shoalPool) release(l shoal.Lease[*noopConn]) { l.Release() }

func (p *shoalPool) waits() int64 { return p.pool.Stats().WaitedAcquires }

func (p *shoalPool) close() error {
	st := p.pool.Stats()
	if err := p.pool.Close(context.Background()); err != nil {
		return err
	}
	if st.TotalConns != poolSize || st.InUseConns != 0 {
		return fmt.Errorf("shoal at the end: %+v", st)
	}
	return checkDials(p.conns)
}

// --- puddle

type puddlePool struct {
	pool  *puddle.Pool[*noopConn]
	conns *connCounter
}

func openPuddle(ctx context.Context) (benchPool[*puddle.Resource[*noopConn]], error) {
	conns := new(connCounter)
	pool, err := puddle.NewPool(&puddle.Config[*noopConn]{
		Constructor: conns.dial,
		Destructor:  func(*noopConn) {},
		MaxSize:     poolSize,
	})
	if err != nil {
		return nil, err
	}
	p := &puddlePool{pool: pool, conns: conns}
	if err := warm(ctx, p); err != nil {
		pool.Close()
		return nil, err
	}
	return p, nil
}

func (p *puddlePool) acquire(ctx context.Context) (*puddle.Resource[*noopConn], error) {
	return p.pool.Acquire(ctx)
}

func (p *puddlePool) release(r *puddle.Resource[*noopConn]) { r.Release() }

func (p *puddlePool) waits() int64 { return p.pool.Stat().EmptyAcquireCount() }

func (p *puddlePool) close() error {
	p.pool.Close() // waits for the resources, which are all idle
	return checkDials(p.conns)
}

// --- database/sql over the no-op driver

type sqlPool struct {
	db    *sql.DB
	conns *noopConnector
}

func openSQL(ctx context.Context) (benchPool[*sql.Conn], error) {
	conns := new(noopConnector)
	db := sql.OpenDB(conns)
	db.SetMaxOpenConns(poolSize)
	db.SetMaxIdleConns(poolSize)
	p := &sqlPool{db: db, conns: conns}
	if err := warm(ctx, p); err != nil {
		db.Close()
		return nil, err
	}
	return p, nil
}

func (p *sqlPool) acquire(ctx context.Context) (*sql.Conn, error) { return p.db.Conn(ctx) }

func (p *sqlPool) release(c *sql.Conn) { c.Close() }

func (p *sqlPool) waits() int64 { return p.db.Stats().WaitCount }

func (p *sqlPool) close() error {
	st := p.db.Stats()
	if err := p.db.Close(); err != nil {
		return err
	}
	if st.OpenConnections != poolSize || st.MaxIdleClosed != 0 {
		return fmt.Errorf("database/sql at the end: %+v", st)
	}
	return checkDials(&p.conns.connCounter)
}

// --- vitess smartconnpool

// vitessConn implements smartconnpool.Connection with nothing behind it.
type vitessConn struct {
	closed atomic.Bool
}

func (*vitessConn) ApplySetting(context.Context, *smartconnpool.Setting) error { return nil }
func (*vitessConn) ResetSetting(context.Context) error                         { return nil }
func (*vitessConn) Setting() *smartconnpool.Setting                            { return nil }
func (c *vitessConn) IsClosed() bool                                           { return c.closed.Load() }
func (c *vitessConn) Close()                                                   { c.closed.Store(true) }

type vitessPool struct {
	pool  *smartconnpool.ConnPool[*vitessConn]
	conns *connCounter
}

func openVitess(ctx context.Context) (benchPool[*smartconnpool.Pooled[*vitessConn]], error) {
	conns := new(connCounter)
	pool := smartconnpool.NewPool(&smartconnpool.Config[*vitessConn]{Capacity: poolSize})
	pool.Open(func(ctx context.Context) (*vitessConn, error) {
		conns.dials.Add(1)
		return new(vitessConn), nil
	}, nil)
	p := &vitessPool{pool: pool, conns: conns}
	if err := warm(ctx, p); err != nil {
		pool.Close()
		return nil, err
	}
	return p, nil
}

func (p *vitessPool) acquire(ctx context.Context) (*smartconnpool.Pooled[*vitessConn], error) {
	return p.pool.Get(ctx, nil)
}

func (p *vitessPool) release(c *smartconnpool.Pooled[*vitessConn]) { c.Recycle() }

func (p *vitessPool) waits() int64 { return p.pool.Metrics.WaitCount() }

func (p *vitessPool) close() error {
	if err := p.pool.CloseWithContext(context.Background()); err != nil {
		return err
	}
	return checkDials(p.conns)
}

// --- a bare buffered channel: the floor

// chanPool is the simplest pool there is: a buffered channel holding the
// connections. It ignores ctx (a receive without select), which no real pool
// can afford; it is here as the floor, not as a contender.
type chanPool struct {
	ch chan *noopConn
}

func openChan(ctx context.Context) (benchPool[*noopConn], error) {
	conns := new(connCounter)
	p := &chanPool{ch: make(chan *noopConn, poolSize)}
	for range poolSize {
		c, _ := conns.dial(ctx)
		p.ch <- c
	}
	return p, nil
}

func (p *chanPool) acquire(context.Context) (*noopConn, error) { return <-p.ch, nil }

func (p *chanPool) release(c *noopConn) { p.ch <- c }

func (p *chanPool) waits() int64 { return -1 }

func (p *chanPool) close() error {
	if n := len(p.ch); n != poolSize {
		return fmt.Errorf("chan at the end: %d connections idle, want %d", n, poolSize)
	}
	return nil
}
