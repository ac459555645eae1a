package shoalhttp

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal"
)

// The probe dials an origin's first connection before the pool exists, and
// the pool's first dial only hands that connection over: timed by the
// pool, the dial would reach the Observer as taking next to nothing, and
// db_client_connection_create_time would miss the one dial every origin
// makes. seedDialObserver adds the probe's dial to it.

// seedDialObserver is an origin pool's Observer when its first dial hands
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
	s := seedDialObserver{Observer: o, took: took}
	if t, ok := o.(shoal.WaitTracer); ok && tracing(t) {
		return seedDialTracer{s, t}
	}
	return s
}

// ObserveDial adds the probe's duration to the dial that handed its
// connection over.
func (s seedDialObserver) ObserveDial(took time.Duration, err error) {
	if err == nil {
		took += time.Duration(s.took.Swap(0))
	}
	s.Observer.ObserveDial(took, err)
}

// Attach passes the pool's Stats on, so that the metrics' gauges read it.
func (s seedDialObserver) Attach(stats func() shoal.Stats) func() {
	if a, ok := s.Observer.(shoal.StatsAttacher); ok {
		return a.Attach(stats)
	}
	return func() {}
}

// AttachHolders passes the pool's holders on, for the live page.
func (s seedDialObserver) AttachHolders(holders func() []shoal.Holder) func() {
	if a, ok := s.Observer.(shoal.HoldersAttacher); ok {
		return a.AttachHolders(holders)
	}
	return func() {}
}

// seedDialTracer is a seedDialObserver whose Observer traces waits: only
// then does the pool pay for tracing them.
type seedDialTracer struct {
	seedDialObserver
	t shoal.WaitTracer
}

// TraceWait passes the wait on.
func (s seedDialTracer) TraceWait(ctx context.Context, start time.Time, wait time.Duration, err error) {
	s.t.TraceWait(ctx, start, wait, err)
}

// tracing reports whether t traces waits: true unless it has a Tracing
// method that says no (see shoal.WaitTracer).
func tracing(t shoal.WaitTracer) bool {
	s, ok := t.(interface{ Tracing() bool })
	return !ok || s.Tracing()
}
