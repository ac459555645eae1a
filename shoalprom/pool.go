package shoalprom

import (
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/poolmetrics"
)

// PoolMetrics are the metrics of one pool in a Collector. They implement
// shoal.Observer: set them as the pool's Config.Observer. Make them with
// Collector.Pool. Their methods are safe for concurrent use.
type PoolMetrics struct {
	collector *Collector
	pool      *poolmetrics.Pool // the name, its attached Stats and hosts
	// late, for metrics made without a name, holds the metrics bound to
	// the name of the pool that attached them; every method forwards to
	// them. nil for metrics made with a name.
	late *poolmetrics.Deferred[PoolMetrics]

	// Children bound once in Collector.Pool, so that observing is a few
	// atomic operations with no label lookup, no lock and no allocation.
	createTime, waitTime, useTime           prometheus.Observer
	timeouts, dialErrors, rejections, leaks prometheus.Counter
	closes                                  []prometheus.Counter // by shoal.Reason
}

var _ shoal.Observer = (*PoolMetrics)(nil)

// Name returns the pool's name, its pool_name label; "" for metrics made
// without a name until a pool attaches them.
func (m *PoolMetrics) Name() string {
	if m.late != nil {
		if b := m.late.Load(); b != nil {
			return b.Name()
		}
		return ""
	}
	return m.pool.Name()
}

// Attach gives the metrics a pool's Stats method, called at
// each scrape for the gauges (connections idle and used, waiters, dials in
// flight, leases and MaxConns) and for shoal_pool_barge_misses_total.
// Until a pool is attached those gauges are not reported for this name;
// the barge-miss counter is, at zero, as the other counters are. stats
// runs in the scraping goroutine and must be safe to call concurrently
// with the pool's use, as shoal's Pool.Stats is.
//
// A pool whose Config.Observer is these metrics (directly or through
// shoal.MultiObserver) attaches itself: shoal.New calls Attach, and the
// pool detaches when it is closed. Call Attach yourself only for a Stats
// function no pool attaches, or the gauges count that pool twice.
//
// Usually one pool is attached for its whole life. When several pools
// share the name, one after another with overlap (a shoalhttp origin whose
// pool was replaced while the old one drains), make all of them use these
// metrics as Observer (each attaches itself): their gauges are summed, and their
// counters and histograms add up already. Attach returns the function that
// detaches stats again. Calling it twice does nothing.
//
// Metrics made without a name (Collector.Pool("")) take the name of the
// first pool that attaches them, its Stats.Name (shoal.Config.Name, or
// the name the pool made up); when another pool of the Collector has that
// name already, the first free of name-2, name-3 and so on.
func (m *PoolMetrics) Attach(stats func() shoal.Stats) (detach func()) {
	if m.late != nil {
		b, _ := m.late.Bind(stats, m.collector.Pool, ErrDuplicatePool, func(b *PoolMetrics, hosts func() []shoal.HostStat) func() { return b.AttachHosts(hosts) })
		if b == nil {
			return func() {}
		}
		return b.Attach(stats)
	}
	return m.pool.Attach(stats)
}

// Unregister removes the pool from its Collector: its series disappear
// from the next scrape and its name may be registered again. Call it when
// the pool is closed for good before the process ends (a shoalhttp origin
// pool that was dropped, say), so that its series do not linger. The
// methods of m stay safe to call afterwards; what they record is no longer
// reported. Calling it again does nothing. It returns nothing, as
// shoalotel's does: it cannot fail.
func (m *PoolMetrics) Unregister() {
	if m.late != nil {
		if b := m.late.Remove(); b != nil {
			b.Unregister()
		}
		return
	}
	m.pool.Unregister(func() { m.collector.forget(m.pool.Name()) })
}

// ObserveAcquire records wait in db_client_connection_wait_time_seconds.
func (m *PoolMetrics) ObserveAcquire(wait time.Duration) {
	if m.late != nil {
		if b := m.late.Load(); b != nil {
			b.ObserveAcquire(wait)
		}
		return
	}
	m.waitTime.Observe(wait.Seconds())
}

// ObserveRelease records held in db_client_connection_use_time_seconds.
func (m *PoolMetrics) ObserveRelease(held time.Duration) {
	if m.late != nil {
		if b := m.late.Load(); b != nil {
			b.ObserveRelease(held)
		}
		return
	}
	m.useTime.Observe(held.Seconds())
}

// ObserveDial records a successful dial's duration in
// db_client_connection_create_time_seconds and counts a failed one in
// shoal_pool_dial_errors_total.
func (m *PoolMetrics) ObserveDial(took time.Duration, err error) {
	if m.late != nil {
		if b := m.late.Load(); b != nil {
			b.ObserveDial(took, err)
		}
		return
	}
	if err != nil {
		m.dialErrors.Inc()
		return
	}
	m.createTime.Observe(took.Seconds())
}

// ObserveClose counts a closed connection in shoal_pool_closes_total under
// its reason.
func (m *PoolMetrics) ObserveClose(reason shoal.Reason) {
	if m.late != nil {
		if b := m.late.Load(); b != nil {
			b.ObserveClose(reason)
		}
		return
	}
	if r := int(reason); r > 0 && r < len(m.closes) && m.closes[r] != nil {
		m.closes[r].Inc()
		return
	}
	// A reason this package did not know when the pool was registered:
	// rare, so the label lookup (and its allocation) is acceptable. After
	// Unregister it would bring the pool's series back, so skip it then.
	if m.pool.Removed() {
		return
	}
	m.collector.closes.WithLabelValues(m.pool.Name(), reason.String()).Inc()
}

// ObserveReject counts in shoal_pool_rejections_total an acquire refused by
// MaxWaiters or dropped by load shedding.
func (m *PoolMetrics) ObserveReject() {
	if m.late != nil {
		if b := m.late.Load(); b != nil {
			b.ObserveReject()
		}
		return
	}
	m.rejections.Inc()
}

// ObserveTimeout counts in db_client_connection_timeouts_total an acquire whose
// context ended while it waited: a deadline or a cancellation, which the
// pool does not tell apart. Its wait is not recorded in wait_time: it
// obtained no connection.
func (m *PoolMetrics) ObserveTimeout(waited time.Duration) {
	if m.late != nil {
		if b := m.late.Load(); b != nil {
			b.ObserveTimeout(waited)
		}
		return
	}
	m.timeouts.Inc()
}

// ObserveLeak counts a lease held past Config.LeakThreshold in
// shoal_pool_leaks_total. The report's stack goes to the pool's Logger,
// not to metrics.
func (m *PoolMetrics) ObserveLeak(r shoal.LeakReport) {
	if m.late != nil {
		if b := m.late.Load(); b != nil {
			b.ObserveLeak(r)
		}
		return
	}
	m.leaks.Inc()
}
