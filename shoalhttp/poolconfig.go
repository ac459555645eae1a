package shoalhttp

import (
	"context"
	"time"

	"github.com/shoalpool/shoal"
)

// poolConfig turns Options (with defaults applied) into the core's Config
// for one origin. Callers add the hooks their protocol needs.
func poolConfig[T any](o Options, origin string, dial func(context.Context) (T, error), closeConn func(T) error) shoal.Config[T] {
	cfg := shoal.Config[T]{
		Name:           poolName(o.Name, origin),
		Dial:           dial,
		Close:          closeConn,
		MaxConns:       o.MaxConns,
		MinIdle:        o.MinIdle,
		MinConns:       max(o.MinConns, 0), // HTTP/2 sets its own default
		Partitions:     o.Partitions,
		MaxWaiters:     o.MaxWaiters,
		MaxLifetime:    o.MaxLifetime,
		LifetimeJitter: o.LifetimeJitter,
		MaxIdleTime:    o.MaxIdleTime,
		DialTimeout:    o.dialBound(),
		LeakThreshold:  o.LeakThreshold,
	}
	if o.Logger != nil { // withDefaults made it slog.Default() if unset
		cfg.Logger = o.Logger.With("origin", origin)
	}
	if o.Observer != nil {
		cfg.Observer = o.Observer(origin)
	}
	if o.Budget != nil {
		cfg.Budget = o.Budget(origin)
	}
	return cfg
}

// poolName names an origin's pool: the origin, after Options.Name when
// there is one.
func poolName(name, origin string) string {
	if name == "" {
		return origin
	}
	return name + " " + origin
}

// dialBound bounds a whole dial, the probe's and the pool's: TCP, TLS and,
// for HTTP/2, the settings exchange; each step has its own bound too. With
// either step unbounded (a negative Options value, 0 here) so is the whole,
// and the result is 0: no bound.
func (o Options) dialBound() time.Duration {
	if o.DialTimeout == 0 || o.TLSHandshakeTimeout == 0 {
		return 0
	}
	return o.DialTimeout + o.TLSHandshakeTimeout
}
