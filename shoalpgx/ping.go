package shoalpgx

import (
	"context"
	"log/slog"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal"
)

// abandonedPingLimit bounds a ping whose caller has left: it may go on for
// this long to keep a healthy connection, as in pgxpool, and no longer, so
// that a ping with no deadline cannot hold a connection for ever.
const abandonedPingLimit = time.Minute

// The states of a ping run for an acquire, which the pinging goroutine
// and the acquiring caller each try to move on from pingRunning: whoever
// does decides who deals with the connection.
const (
	pingRunning int32 = iota
	pingFinished
	pingAbandoned
)

// pingForAcquire pings pc before the acquire hands it out, and reports
// whether it answered; one that did not has been closed. When ctx ends
// first it returns ctx.Err() at once and leaves the connection to the ping
// (pingLeavable), which gives it back to the pool unused if it answers.
func (p *Pool) pingForAcquire(ctx context.Context, pc *pooledConn) (bool, error) {
	left, err := p.pingLeavable(ctx, pc, leftPing{})
	if left {
		return false, err
	}
	return p.pinged(pc, err), nil
}

// leftPing says what becomes of a connection whose caller left during its
// ping, once the ping answers: an acquire's goes back to the pool unused
// (held false); a holder's (shoalpgx/stdlib's, Conn.checkIdle) is first
// tidied by tidy, when not nil, then released as its holder would have.
type leftPing struct {
	held bool
	tidy func()
}

// pingLeavable pings pc for a caller who may leave before it answers, and
// returns the ping's error, or left true and ctx.Err() when ctx ended
// first. The ping runs under the pool's bounds, PingTimeout and, once the
// caller has left, abandonedPingLimit, never under ctx's cancel or deadline:
// pgx closes a connection whose ping is cut short, so a caller who gave up
// mid-ping, by a cancel or at its deadline alike, would cost a healthy
// connection. When ctx ends first, pingLeavable returns at once and the
// ping goes on; the connection is no longer the caller's, and goes back to
// the pool (as then says) if it answers and is closed if not. Only then
// does a ping cost a goroutine.
func (p *Pool) pingLeavable(ctx context.Context, pc *pooledConn, then leftPing) (left bool, err error) {
	if ctx.Done() == nil {
		// Nothing can end ctx (and so it has no deadline): ping here.
		return false, p.ping(ctx, pc)
	}
	pctx, stop := context.WithCancel(context.WithoutCancel(ctx))
	var state atomic.Int32
	var limit *time.Timer // set by the caller before it abandons the ping
	done := make(chan error, 1)
	go func() {
		err := p.ping(pctx, pc)
		if state.CompareAndSwap(pingRunning, pingFinished) {
			done <- err
			return
		}
		// The caller left, and set limit before it said so.
		limit.Stop()
		stop()
		p.endAbandonedPing(pc, err, then)
	}()
	select {
	case err := <-done:
		stop()
		return false, err
	case <-ctx.Done():
	}
	limit = time.AfterFunc(abandonedPingLimit, stop)
	if !state.CompareAndSwap(pingRunning, pingAbandoned) {
		// The ping ended as ctx did: its result is on its way.
		limit.Stop()
		stop()
		p.endAbandonedPing(pc, <-done, then)
	}
	return true, ctx.Err()
}

// ping checks a connection with a round trip, bounded by PingTimeout.
func (p *Pool) ping(ctx context.Context, pc *pooledConn) error {
	if d := p.config.PingTimeout; d > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, d)
		defer cancel()
	}
	return pc.ping(ctx)
}

// pinged acts on the ping of a connection its acquire still wants: it
// reports whether the connection answered, and closes it if not.
func (p *Pool) pinged(pc *pooledConn, err error) bool {
	if err == nil {
		return true
	}
	p.pingFailed(pc, err)
	return false
}

// endAbandonedPing acts on the ping of a connection whose caller left
// during it: back to the pool if it answered, closed if not.
func (p *Pool) endAbandonedPing(pc *pooledConn, err error, then leftPing) {
	if then.held {
		// Its holder acquired it: the ReleaseTracer hears its end, as it
		// would have heard the holder's Release.
		if err != nil {
			pc.traceRelease()
			p.pingFailed(pc, err)
			return
		}
		if then.tidy != nil {
			then.tidy()
		}
		pc.releaseByCaller()
		return
	}
	if err != nil {
		p.pingFailed(pc, err)
		return
	}
	pc.releaseUnused()
}

// pingFailed closes a connection that failed its ping, and says so, as the
// core says of a failed health check.
func (p *Pool) pingFailed(pc *pooledConn, err error) {
	l := p.config.Logger
	if l == nil {
		l = slog.Default() // as the core's lines
	}
	if l.Enabled(context.Background(), slog.LevelWarn) {
		l.LogAttrs(context.Background(), slog.LevelWarn, "shoalpgx: ping before handing out a connection failed; closing it",
			slog.String("pool", p.config.Name), slog.String("error", err.Error()))
	}
	pc.lease.DiscardFor(shoal.ReasonHealth)
}
