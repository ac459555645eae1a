package shoalhttp

import (
	"context"
	"time"

	"github.com/shoalpool/shoal"
)

// warmPool opens max(minIdle, 1) connections. With MinIdle set, the
// pool's maintenance already dials MinIdle connections in the background
// (from New on, and again whenever they drop below it); warmPool waits for
// them rather than calling Pool.Warm, which races with that refill and can
// open up to twice MinIdle, and which returns before the refill's dials
// land. A failed dial is surfaced through an acquire, which reports it.
func warmPool[T any](ctx context.Context, p *shoal.Pool[T], minIdle int) error {
	if minIdle == 0 {
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
		if st.TotalConns >= minIdle {
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
