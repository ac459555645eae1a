package shoal

import (
	"context"
	"time"
)

// healthCheckTimeout bounds one background check of an idle connection, so
// that a check that hangs cannot stop maintenance.
const healthCheckTimeout = 5 * time.Second

// idleCheckDue reports whether the background check of idle connections
// (Config.HealthCheckPeriod) is due at now, given when it last ran.
func (p *Pool[T]) idleCheckDue(now, last int64) bool {
	return p.cfg.HealthCheckPeriod > 0 && now-last >= int64(p.cfg.HealthCheckPeriod)
}

// checkIdle runs HealthCheck on every idle connection that has been idle at
// least HealthCheckAfter. A partition with none due is left alone, as reap
// leaves it: emptying a stack, even briefly, makes acquirers steal or wait.
// Otherwise the stack is emptied once, the connections not due go straight
// back (bottom first, so they keep their order), and the due ones are
// checked one after another, each put back as soon as it passes: a slow
// check holds up only the connection it is checking.
func (p *Pool[T]) checkIdle(now int64) {
	for i := range p.ex.parts {
		if !p.ex.anyIdle(i, func(c *conn[T]) bool { return p.idleCheckNeeded(c, now) }) {
			continue
		}
		var due []*conn[T]
		popped := p.ex.popAll(i)
		for k := len(popped) - 1; k >= 0; k-- {
			if c := popped[k]; p.idleCheckNeeded(c, now) {
				due = append(due, c)
			} else {
				p.putBack(c)
			}
		}
		for _, c := range due {
			p.finishIdleCheck(c, now)
		}
	}
}

// idleCheckNeeded reports whether an idle connection is due for the
// background check: idle at least HealthCheckAfter and not past its
// lifetime (reap closes those).
func (p *Pool[T]) idleCheckNeeded(c *conn[T], now int64) bool {
	return !c.expired(now) && c.idleFor(now) >= p.healthAfter
}

// finishIdleCheck checks one idle connection taken off its stack and puts
// it back, or closes it: for a failed check (ReasonHealth), or for what
// happened to it while it was off the stack, where Reset, a revoke or Close
// could not reach it.
func (p *Pool[T]) finishIdleCheck(c *conn[T], now int64) {
	if p.closed.Load() {
		p.closeConn(c, ReasonPoolClosed)
		return
	}
	ctx, cancel := context.WithTimeout(p.ctx, healthCheckTimeout)
	err := p.callHealthCheck(context.WithValue(ctx, idleKey{}, time.Duration(c.idleFor(now))), c)
	cancel()
	switch {
	case p.closed.Load():
		p.closeConn(c, ReasonPoolClosed)
	case err != nil:
		p.logConnError("idle health check failed", c, err)
		p.closeConn(c, ReasonHealth)
	default:
		p.putBack(c)
	}
}

// putBack returns an idle connection that maintenance took off its stack,
// or closes it if it was retired meanwhile: Reset and a budget's revoke mark
// the connections they cannot reach on the stacks, and rely on whoever
// holds them to look.
func (p *Pool[T]) putBack(c *conn[T]) {
	if why := c.retiredFor(); why != 0 {
		p.closeConn(c, why)
		return
	}
	p.ex.repool(&c.lease)
}
