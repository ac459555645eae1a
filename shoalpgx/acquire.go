package shoalpgx

import (
	"context"
	"errors"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/shoalpool/shoal"
)

// errAcquireAttempts is the error of an acquire whose MaxConns+1
// connections in a row failed their ping or were refused by PrepareConn:
// more than a pool full of bad connections points at a hook that refuses
// every one.
var errAcquireAttempts = errors.New("shoalpgx: acquire gave up after MaxConns+1 connections in a row failed their ping or were refused by PrepareConn (or BeforeAcquire); a hook may be refusing every connection")

// Acquire returns a connection from the pool, waiting until one is free, a
// new one is dialled, or ctx ends. Release it when done. An error wraps
// ctx.Err() when the context ended, shoal.ErrClosed when the pool is closed,
// and the dial's error (with shoal.ErrDial) when the server could not be
// reached; a *shoal.AcquireError says what was waited for and how long. When
// ctx ends while the connection is being pinged, the error is ctx.Err()
// itself, as in pgxpool, and the connection goes back to the pool (or is
// closed) once the ping ends. An error of PrepareConn's is returned as it
// is.
func (p *Pool) Acquire(ctx context.Context) (*Conn, error) {
	pc, err := p.acquire(ctx)
	if err != nil {
		return nil, err
	}
	return pc.newConn(p), nil
}

// AcquireFunc acquires a connection, calls f with it and releases it, as
// pgxpool's does. ctx bounds the acquire only. It returns the acquire's
// error or f's.
func (p *Pool) AcquireFunc(ctx context.Context, f func(*Conn) error) error {
	c, err := p.Acquire(ctx)
	if err != nil {
		return err
	}
	defer c.Release()
	return f(c)
}

// acquire is Acquire without the wrapper: the pooled connection with its
// lease remembered in it. Every operation on the pool acquires through it,
// so the AcquireTracer sees them all, as pgxpool's does.
func (p *Pool) acquire(ctx context.Context) (*pooledConn, error) {
	if p.acquireTracer == nil {
		return p.acquireReady(ctx)
	}
	return p.acquireTraced(ctx)
}

// acquireTraced is acquire between TraceAcquireStart and TraceAcquireEnd.
// The end is deferred, as in pgxpool, so that a hook that panics does not
// leave the tracer's span open.
func (p *Pool) acquireTraced(ctx context.Context) (pc *pooledConn, err error) {
	ctx = p.acquireTracer.TraceAcquireStart(ctx, p, TraceAcquireStartData{})
	defer func() {
		var conn *pgx.Conn
		if pc != nil {
			conn = pc.conn
		}
		p.acquireTracer.TraceAcquireEnd(ctx, p, TraceAcquireEndData{Conn: conn, Err: err})
	}()
	return p.acquireReady(ctx)
}

// acquireReady takes a lease from the core (which has checked the lifetime
// and looked at the socket) and readies its connection, trying another
// connection when one fails its ping or PrepareConn refuses it, up to
// p.attempts in all, as pgxpool does.
func (p *Pool) acquireReady(ctx context.Context) (*pooledConn, error) {
	for range p.attempts {
		lease, err := p.core.Acquire(ctx)
		if err != nil {
			return nil, err
		}
		pc := lease.Value()
		pc.lease = lease
		ok, err := p.admit(ctx, pc)
		if ok {
			return pc, nil
		}
		if err != nil {
			return nil, err
		}
	}
	return nil, errAcquireAttempts
}

// admit does what stands between the core's hand-over and the caller, in
// pgxpool's order: the ping when ShouldPing (or the socket look) asks for
// one, then PrepareConn. It reports true when pc may be handed out. On
// false pc has been closed or given back: with a nil error the acquire tries
// another connection, and any other error ends it.
func (p *Pool) admit(ctx context.Context, pc *pooledConn) (bool, error) {
	idle, mustPing := pc.idle, pc.mustPing
	pc.idle, pc.mustPing = 0, false
	if !p.admitHost(ctx, pc) {
		return false, nil
	}
	if mustPing || p.pingDue(ctx, pc, idle) {
		alive, err := p.pingForAcquire(ctx, pc)
		if !alive {
			return false, err
		}
	}
	if p.prepareConn == nil {
		return true, nil
	}
	ok, err := p.callPrepareConn(ctx, pc)
	switch {
	case ok && err == nil:
		return true, nil
	case ok:
		pc.releaseUnused()
	default:
		pc.lease.DiscardFor(shoal.ReasonRejected)
	}
	return false, err
}

// pingDue reports whether pc is to be pinged before it is handed out:
// ShouldPing's answer, or by default whether it sat idle longer than
// HealthCheckAfter.
func (p *Pool) pingDue(ctx context.Context, pc *pooledConn, idle time.Duration) bool {
	if p.config.ShouldPing == nil {
		return p.config.HealthCheckAfter > 0 && idle > p.config.HealthCheckAfter
	}
	defer pc.discardOnPanic()
	return p.config.ShouldPing(ctx, ShouldPingParams{Conn: pc.conn, IdleDuration: idle})
}

// callPrepareConn runs PrepareConn (or the BeforeAcquire it wraps) on pc.
func (p *Pool) callPrepareConn(ctx context.Context, pc *pooledConn) (bool, error) {
	defer pc.discardOnPanic()
	return p.prepareConn(ctx, pc.conn)
}

// discardOnPanic, deferred around a hook, closes pc when the hook panics
// and lets the panic go on: the caller sees it, as with pgxpool, and the
// connection does not stay leased for ever.
func (pc *pooledConn) discardOnPanic() {
	if r := recover(); r != nil {
		pc.lease.Discard()
		panic(r)
	}
}
