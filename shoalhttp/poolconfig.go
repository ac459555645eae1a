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
	if o.Logger != nil {
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

// dialBound bounds a whole dial, the probe's and the pool's: TCP, TLS and,
// for HTTP/2, the settings exchange; each step has its own bound too.
func (o Options) dialBound() time.Duration { return o.DialTimeout + o.TLSHandshakeTimeout }
