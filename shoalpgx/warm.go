package shoalpgx

import (
	"context"
	"fmt"
)

// Warm opens connections until max(MinConns, MinIdleConns) are open,
// counting those open already and those being dialled, MaxDialing at a
// time, and returns once they are open: call it after NewWithConfig (which
// only starts those dials in the background) to have the pool's floor of
// connections ready before the first request, or to learn at start that
// the server cannot be reached. It dials nothing when the floor is met
// already.
//
// The error, when the floor was not reached, names the pool, says how many
// connections are open of how many wanted, and wraps the cause: the first dial error
// (without the password), ctx's error if ctx ended first, or
// shoal.ErrClosed if the pool was closed. The connections that did open
// stay in the pool.
func (p *Pool) Warm(ctx context.Context) error {
	err := p.core.Warm(ctx)
	if err == nil {
		return nil
	}
	s := p.core.Stats()
	return fmt.Errorf("shoalpgx pool %q: Warm: %d of %d connections open: %w", p.config.Name, s.TotalConns, max(p.config.MinConns, p.config.MinIdleConns), err)
}
