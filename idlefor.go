package shoal

import (
	"context"
	"time"
)

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
