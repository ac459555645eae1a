package shoalhttp

import (
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/observewrap"
)

// The probe dials an origin's first connection before the pool exists, and
// the pool's first dial only hands that connection over: timed by the
// pool, the dial would reach the Observer as taking next to nothing, and
// db_client_connection_create_time would miss the one dial every origin
// makes. seedDialObserver adds the probe's dial to it.

// seedDialObserver hears an origin pool's events when its first dial hands
// over the probe's connection: the first successful dial it hears of after
// that hand-over has the probe's duration added, the rest passes through.
type seedDialObserver struct {
	shoal.Observer
	took *atomic.Int64 // the probe's dial in nanoseconds, set at the hand-over; 0 once added
}

// withSeedDial wraps o so that the dial that hands over the probe's
// connection reports the probe's duration, which the pool stores in took.
// It keeps what o does beyond Observer: its Stats and holders, and its wait
// tracing when it traces.
func withSeedDial(o shoal.Observer, took *atomic.Int64) shoal.Observer {
	return observewrap.Wrap(o, observewrap.Options{Events: seedDialObserver{Observer: o, took: took}})
}

// ObserveDial adds the probe's duration to the dial that handed its
// connection over.
func (s seedDialObserver) ObserveDial(took time.Duration, err error) {
	if err == nil {
		took += time.Duration(s.took.Swap(0))
	}
	s.Observer.ObserveDial(took, err)
}
