package shoalpgx

import (
	"context"
	"errors"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/peek"
	"github.com/shoalpool/shoal/shoalpgx/internal/bridge"
)

// peekAfter is the idleness after which an acquire looks at a connection's
// socket before handing it out. Under load connections are idle for
// microseconds (and hand-offs skip the check), so the look costs nothing
// there; after a quiet millisecond it costs one non-blocking recv.
const peekAfter = time.Millisecond

// Why an idle connection failed its look.
var (
	errIdleClosed = errors.New("the server closed the idle connection")
	errIdleFatal  = errors.New("the server sent an error on the idle connection (terminated, or shutting down)")
)

// initPeek prepares the idle check for a new connection.
func (pc *pooledConn) initPeek() { pc.peek.Init(pc.conn.PgConn().Conn()) }

// idleCheck looks at an idle connection's socket without a round trip. A
// server that terminates a backend (pg_terminate_backend, a restart, an
// idle timeout) sends an ErrorResponse, 'E', then closes. It reports an
// error when that shows, and whether a ping must decide instead: over TLS
// the waiting bytes are an encrypted record, fatal error or not, and the
// close behind them stays hidden until they are read. Other messages a
// server may send unasked in plain text (notices, notifications, parameter
// changes) are left for pgx to read with the next query.
func (pc *pooledConn) idleCheck() (mustPing bool, err error) {
	switch res, first := pc.peek.Peek(); res {
	case peek.Closed:
		return false, errIdleClosed
	case peek.Data:
		if pc.peek.TLS() {
			return true, nil
		}
		if first == 'E' {
			return false, errIdleFatal
		}
	}
	return false, nil
}

// healthCheck is the core's health check. The core runs it when it takes a
// connection idle at least the core's HealthCheckAfter off the idle stacks
// for an acquire, and, every HealthCheckPeriod, on each idle connection in
// the background. It makes no round trip and does not use ctx: it notes in
// pc how long the connection sat idle and whether a ping must decide, for
// the acquire to act on (acquire.go), and fails a connection whose socket
// shows the server closed it. The ping itself runs in the acquire, after
// the core has handed the connection over, so that it need not run under
// the caller's cancellation. The holder of pc (the acquiring caller, or
// the maintenance goroutine while it checks) is the only one touching it.
func (p *Pool) healthCheck(ctx context.Context, pc *pooledConn) error {
	idle, _ := shoal.IdleFor(ctx)
	pc.idle = idle
	if p.lookAfter == 0 || idle < p.lookAfter {
		return nil // the threshold was lowered only to measure idleness for ShouldPing
	}
	mustPing, err := pc.idleCheck()
	if err != nil {
		return err
	}
	pc.mustPing = mustPing
	return nil
}

// checkIdle is the acquire's check for a connection that sat idle in its
// holder's hands rather than in the pool (database/sql's idle connections,
// in shoalpgx/stdlib): the look at the socket after peekAfter, then a ping,
// bounded by PingTimeout, when the look cannot tell or the connection has
// been idle HealthCheckAfter; nothing when HealthCheckAfter is 0. The ping
// runs as an acquire's does (pingLeavable): should ctx end during it,
// checkIdle returns ctx.Err() at once with left true, c is no longer the
// holder's (as after a Release), and the ping goes on; the connection then
// goes back to the pool, after tidy, if it answers.
func (c *Conn) checkIdle(ctx context.Context, idle time.Duration, tidy func()) (left bool, err error) {
	after := c.p.config.HealthCheckAfter
	if after <= 0 || idle < peekAfter {
		return false, nil
	}
	mustPing, err := c.pc.idleCheck()
	if err != nil {
		return false, err
	}
	if !mustPing && idle < after {
		return false, nil
	}
	left, err = c.p.pingLeavable(ctx, c.pc, leftPing{held: true, tidy: tidy})
	if left {
		c.pc = nil // the ping's now: see Release
	}
	return left, err
}

// init hands checkIdle to shoalpgx/stdlib, which reaches only the exported
// API otherwise (internal/bridge).
func init() {
	bridge.CheckIdle = func(ctx context.Context, conn any, idle time.Duration, tidy func()) (bool, error) {
		return conn.(*Conn).checkIdle(ctx, idle, tidy)
	}
}
