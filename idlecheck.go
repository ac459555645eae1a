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
// least HealthCheckAfter, partition by partition. A partition's stack is
// emptied once and its connections go back bottom first, each as soon as
// it passes, so the stack keeps its order and refills while the rest are
// checked; one that fails is closed and refill replaces it.
func (p *Pool[T]) checkIdle(now int64) {
	for i := range p.ex.parts {
		var popped []*conn[T]
		for {
			c := p.ex.parts[i].idle.pop(&p.ex.slots)
			if c == nil {
				break
			}
			popped = append(popped, c)
		}
		for k := len(popped) - 1; k >= 0; k-- {
			c := popped[k]
			if err := p.checkIdleConn(c, now); err != nil {
				p.logConnError("idle health check failed", c, err)
				p.closeConn(c, ReasonHealth)
				continue
			}
			p.repool(&c.lease)
		}
	}
}

// checkIdleConn checks one idle connection taken off its stack, if it has
// been idle long enough to need it.
func (p *Pool[T]) checkIdleConn(c *conn[T], now int64) error {
	idle := c.idleFor(now)
	if c.expired(now) || idle < p.healthAfter {
		return nil // reap closes the expired; the rest are fresh enough
	}
	ctx, cancel := context.WithTimeout(p.ctx, healthCheckTimeout)
	defer cancel()
	return p.callHealthCheck(context.WithValue(ctx, idleKey{}, time.Duration(idle)), c)
}
