package shoalhttp

import (
	"context"
	"time"

	"github.com/shoalpool/shoal"
)

// warmPool opens max(floor, 1) connections, floor being the larger of the
// origin's MinIdle and MinConns, and at most the pool's MaxConns as it is
// now: the pool keeps its floors only up to that limit, so a floor above
// a limit SetMaxConns lowered would be waited for until ctx ends. With a
// floor set, the pool's maintenance
// already dials it in the background (from New on, and again whenever the
// pool drops below it); warmPool waits for those dials rather than calling
// Pool.Warm, which races with that refill and can open up to twice the
// floor, and which returns before the refill's dials land. A failed dial
// is surfaced through an acquire, which reports it.
func warmPool[T any](ctx context.Context, p *shoal.Pool[T], floor int) error {
	if floor <= 0 {
		l, err := p.Acquire(ctx)
		if err != nil {
			return err
		}
		l.Release()
		return nil
	}
	dialErrors := p.Stats().DialErrors
	for {
		st := p.Stats()
		if st.TotalConns >= min(floor, st.MaxConns) {
			return nil
		}
		if st.DialErrors > dialErrors {
			dialErrors = st.DialErrors
			l, err := p.Acquire(ctx)
			if err != nil {
				return err
			}
			l.Release()
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(warmPollInterval):
		}
	}
}

// warmPollInterval is how often warmPool looks for dials in flight.
const warmPollInterval = time.Millisecond
