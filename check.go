package shoal

import (
	"context"
	"time"
)

// check runs the checks that precede handing a connection out: lifetime,
// health after idleness (when idle is set), and BeforeAcquire. It reports
// why the connection must close when one fails. Both engines run it on what
// they take. now is the pool's clock when the caller has just read it, or
// 0 for check to read it: one read per take, on a path every acquire takes.
func (p *Pool[T]) check(ctx context.Context, c *conn[T], idle bool, now int64) (Reason, bool) {
	if c.expiresAt != 0 || p.feat.healthAfter != 0 {
		if now == 0 {
			now = p.now()
		}
		if c.expired(now) {
			return ReasonLifetime, false
		}
		if idle && p.feat.healthAfter != 0 && c.idleFor(now) >= p.feat.healthAfter {
			// The value costs an allocation, only here: after at least
			// HealthCheckAfter of idleness, never on a busy pool's path.
			hctx := context.WithValue(ctx, idleKey{}, time.Duration(c.idleFor(now)))
			if err := p.callHealthCheck(hctx, c); err != nil {
				p.logConnError("health check failed", c, err)
				return ReasonHealth, false
			}
		}
	}
	if p.cfg.Hooks.BeforeAcquire != nil && !p.callBeforeAcquire(ctx, c) {
		return ReasonRejected, false
	}
	return 0, true
}

// callerGone reports whether a failed check is better blamed on the
// caller's context than on the connection: the context has ended, and the
// check was one that uses it (health or BeforeAcquire, not lifetime).
func callerGone(ctx context.Context, reason Reason) bool {
	return reason != ReasonLifetime && ctx.Err() != nil
}

// idleKey carries a checked connection's idleness in HealthCheck's context.
type idleKey struct{}

// IdleFor reports, inside Config.HealthCheck, how long the connection being
// checked had sat idle; ok is false for any other context. A check that
// does something cheap after a short idleness and something dearer after a
// long one (a look at the socket, then a ping) sets HealthCheckAfter to the
// shorter and reads the rest here.
func IdleFor(ctx context.Context) (idle time.Duration, ok bool) {
	idle, ok = ctx.Value(idleKey{}).(time.Duration)
	return idle, ok
}
