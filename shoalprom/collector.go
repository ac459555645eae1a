package shoalprom

import (
	"errors"
	"fmt"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/poolmetrics"
)

// DefaultBuckets returns the histogram buckets used when Options.Buckets is
// empty, in seconds: from 100µs, where an uncontended acquire or a
// loopback dial lands, to 10s, past any sane acquire timeout. It is a
// function, not a variable, so that no package can change another's
// default.
func DefaultBuckets() []float64 { return poolmetrics.DefaultBuckets() }

// Label names. LabelPoolName is on every metric.
const (
	LabelPoolName = "pool_name" // the name given to Collector.Pool
	LabelState    = "state"     // db_client_connection_count: "idle" or "used"
	LabelReason   = "reason"    // shoal_pool_closes_total: shoal.Reason.String()
)

// Values of LabelState.
const (
	StateIdle = "idle"
	StateUsed = "used"
)

// Options configure a Collector. The zero value is ready to use.
type Options struct {
	// Namespace, when set, is put in front of every metric name, joined
	// with "_": "myapp" gives myapp_db_client_connection_count. It must be
	// ASCII letters, digits and underscores, not starting with a digit,
	// so that every scraper stores the names as they are written.
	Namespace string

	// Buckets are the upper bounds, in seconds, of the three duration
	// histograms (create, wait and use time). Empty means DefaultBuckets().
	Buckets []float64

	// ConstLabels are added to every metric. Usually the scraping
	// Prometheus's target labels are the better place for such labels.
	// Their names follow Namespace's rule, must not start with __, and
	// must not be one the metrics vary by (pool_name, state, reason, le);
	// their values must be valid UTF-8.
	// The per-host gauges (PoolMetrics.AttachHosts) use the labels host
	// and role: with a constant label of either name they are left out,
	// and the rest is exported as before.
	ConstLabels prometheus.Labels
}

// Collector is a prometheus.Collector for any number of shoal pools,
// registered with Pool under distinct names. Register it once with a
// prometheus.Registerer. It is safe for concurrent use.
type Collector struct {
	// Gauges, made at scrape time from each pool's Stats.
	count, maxConns, idleMax, idleMin, pending, leases, dialing *prometheus.Desc
	share, demand, members                                      *prometheus.Desc // with a Budget only
	// A counter, made at scrape time from the same Stats.
	bargeMisses *prometheus.Desc
	// Gauges per host, made at scrape time from each pool's hosts function.
	hosts hostDescs

	// Fed by the pools' observers; each pool binds its children once.
	waitTime, useTime, createTime           *prometheus.HistogramVec
	timeouts, dialErrors, rejections, leaks *prometheus.CounterVec
	closes                                  *prometheus.CounterVec

	pools poolmetrics.Registry
}

// New returns a Collector with no pools. It fails when opts make metrics
// Prometheus would refuse or rename, so that the error comes from here,
// naming what is wrong, rather than from a panic in MustRegister or in the
// first Pool, or from a scrape: Buckets out of increasing order or not
// finite, a Namespace or ConstLabels name that is not ASCII letters,
// digits and underscores (not starting with a digit), a ConstLabels name
// starting with __ or one the metrics vary by (pool_name, state, reason,
// le), a ConstLabels value that is not valid UTF-8. The error is a
// *shoal.ConfigError naming the field. shoalotel.New has the same shape.
func New(opts Options) (*Collector, error) {
	buckets := opts.Buckets
	if len(buckets) == 0 {
		buckets = DefaultBuckets()
	}
	if why := poolmetrics.CheckBuckets(buckets); why != "" {
		return nil, &shoal.ConfigError{Struct: "shoalprom.Options", Field: "Buckets", Reason: why}
	}
	if err := checkNames(opts); err != nil {
		return nil, err
	}
	ns := opts.Namespace
	pool := []string{LabelPoolName}
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(ns, "", name), help,
			append([]string{LabelPoolName}, labels...), opts.ConstLabels)
	}
	histogram := func(name, help string) *prometheus.HistogramVec {
		return prometheus.NewHistogramVec(prometheus.HistogramOpts{
			Namespace:   ns,
			Name:        name,
			Help:        help,
			Unit:        "seconds",
			ConstLabels: opts.ConstLabels,
			Buckets:     buckets,
		}, pool)
	}
	counter := func(name, help string, labels ...string) *prometheus.CounterVec {
		return prometheus.NewCounterVec(prometheus.CounterOpts{
			Namespace:   ns,
			Name:        name,
			Help:        help,
			ConstLabels: opts.ConstLabels,
		}, append([]string{LabelPoolName}, labels...))
	}
	c := &Collector{
		count:    desc("db_client_connection_count", "The number of connections that are currently in the state described by the state label (idle: open with no lease; used: open with at least one lease).", LabelState),
		maxConns: desc("db_client_connection_max", "The maximum number of open connections allowed (Config.MaxConns)."),
		idleMax:  desc("db_client_connection_idle_max", "The maximum number of idle open connections allowed (Config.MaxConns: shoal has no separate idle limit)."),
		idleMin:  desc("db_client_connection_idle_min", "The minimum number of idle open connections allowed (Config.MinIdle, at most the limit)."),
		pending:  desc("db_client_connection_pending_requests", "The number of current pending requests for an open connection (callers waiting in Acquire)."),
		leases:   desc("shoal_pool_leases", "The number of leases held now; above the used connections when connections are multiplexed."),
		dialing:  desc("shoal_pool_dialing", "The number of dials in flight."),
		share:    desc("shoal_pool_budget_share", "The connections the pool's Budget lets it hold now (Stats.Share); only for a pool with a Budget."),
		demand:   desc("shoal_pool_budget_demand", "The connections the pool would use now, in use plus waited for (Stats.Demand); only for a pool with a Budget."),
		members:  desc("shoal_pool_budget_members", "The pools sharing the pool's Budget, this one included (Stats.BudgetMembers); only for a pool with a Budget."),

		bargeMisses: desc("shoal_pool_barge_misses_total", "The number of connections a barging release left idle while someone waited, until the barging timer handed them over; each suspends barging for 100ms. Stays 0 without Config.BargeWindow."),

		createTime: histogram("db_client_connection_create_time_seconds", "The time it took to create a new connection (successful dials, including OnConnect)."),
		waitTime:   histogram("db_client_connection_wait_time_seconds", "The time it took to obtain an open connection from the pool (successful acquires)."),
		useTime:    histogram("db_client_connection_use_time_seconds", "The time between borrowing a connection and returning it to the pool."),

		timeouts:   counter("db_client_connection_timeouts_total", "The number of connection timeouts that have occurred trying to obtain a connection from the pool (acquires whose context ended while they waited)."),
		dialErrors: counter("shoal_pool_dial_errors_total", "The number of dials that failed (the Budget's permit, Dial or the OnConnect hook)."),
		rejections: counter("shoal_pool_rejections_total", "The number of acquires refused by MaxWaiters or dropped by load shedding."),
		leaks:      counter("shoal_pool_leaks_total", "The number of leases reported as held past Config.LeakThreshold."),
		closes:     counter("shoal_pool_closes_total", "The number of connections the pool closed, by reason.", LabelReason),

		hosts: newHostDescs(opts),

		pools: poolmetrics.Registry{Package: "shoalprom", ErrDuplicate: ErrDuplicatePool},
	}
	// A registry checks every description the way the one the caller
	// registers c with will; a Desc keeps its error until then.
	if err := prometheus.NewRegistry().Register(c); err != nil {
		return nil, fmt.Errorf("shoalprom: Options.Namespace or ConstLabels make a metric Prometheus refuses: %w", err)
	}
	return c, nil
}

// ErrDuplicatePool is returned by Collector.Pool for a name already in use.
var ErrDuplicatePool = errors.New("shoalprom: pool name already registered")

// Pool registers a pool under name and returns its metrics, to be set as
// the pool's Config.Observer (or an adapter's Observer option). The pool
// attaches itself when it is created, and from then on its gauges are
// reported (see PoolMetrics.Attach).
//
// name becomes the pool_name label: choose it yourself, or make it with
// OriginName, and never let it carry a password (one in it is masked
// where it stands all the same, as in shoal.Config.Name, and Name returns
// the masked name). It must be valid UTF-8
// and not in use in this Collector (the error wraps ErrDuplicatePool);
// after PoolMetrics.Unregister the name is free again. An empty name means
// the pool's own: the metrics take the name of the pool that attaches
// them (shoal.Config.Name, or the one the pool made up; see
// PoolMetrics.Attach), and record nothing until one does.
//
// The counters of the new pool are reported at zero from the next scrape,
// so that rate() sees their first increase.
func (c *Collector) Pool(name string) (*PoolMetrics, error) {
	if name == "" {
		return &PoolMetrics{collector: c, late: new(poolmetrics.Deferred[PoolMetrics])}, nil
	}
	var m *PoolMetrics
	_, err := c.pools.Register(name, func(p *poolmetrics.Pool) error {
		m = c.bind(p)
		return nil
	})
	if err != nil {
		return nil, err
	}
	return m, nil
}

// bind makes the metrics of p, with the children of every vector bound to
// its name.
func (c *Collector) bind(p *poolmetrics.Pool) *PoolMetrics {
	name := p.Name()
	m := &PoolMetrics{
		collector:  c,
		pool:       p,
		createTime: c.createTime.WithLabelValues(name),
		waitTime:   c.waitTime.WithLabelValues(name),
		useTime:    c.useTime.WithLabelValues(name),
		timeouts:   c.timeouts.WithLabelValues(name),
		dialErrors: c.dialErrors.WithLabelValues(name),
		rejections: c.rejections.WithLabelValues(name),
		leaks:      c.leaks.WithLabelValues(name),
	}
	reasons := poolmetrics.ReasonLabels()
	m.closes = make([]prometheus.Counter, len(reasons))
	for r, label := range reasons {
		if label != "" {
			m.closes[r] = c.closes.WithLabelValues(name, label)
		}
	}
	return m
}

// forget deletes the series of the pool named name; the registry calls it
// as the pool unregisters.
func (c *Collector) forget(name string) {
	match := prometheus.Labels{LabelPoolName: name}
	for _, v := range []interface{ DeletePartialMatch(prometheus.Labels) int }{
		c.createTime, c.waitTime, c.useTime,
		c.timeouts, c.dialErrors, c.rejections, c.leaks, c.closes,
	} {
		v.DeletePartialMatch(match)
	}
}

// Describe sends the descriptions of every metric the Collector reports.
// It implements prometheus.Collector.
func (c *Collector) Describe(ch chan<- *prometheus.Desc) {
	for _, d := range []*prometheus.Desc{c.count, c.maxConns, c.idleMax, c.idleMin, c.pending, c.leases, c.dialing, c.share, c.demand, c.members, c.bargeMisses} {
		ch <- d
	}
	c.hosts.describe(ch)
	for _, v := range c.vecs() {
		v.Describe(ch)
	}
}

// Collect reports every registered pool: the counters and histograms as
// observed so far, the gauges and shoal_pool_barge_misses_total from a
// fresh call of each attached pool's Stats, and the per-host gauges from a
// fresh call of its hosts function (AttachHosts). It implements
// prometheus.Collector.
func (c *Collector) Collect(ch chan<- prometheus.Metric) {
	for _, v := range c.vecs() {
		v.Collect(ch)
	}
	c.pools.Each(func(p *poolmetrics.Pool) {
		c.hosts.collect(ch, p)
		s, ok := p.Gauges()
		name := p.Name()
		// After Gauges, which notes each attached pool's count; reported
		// for every registered pool, at zero until one is attached.
		ch <- prometheus.MustNewConstMetric(c.bargeMisses, prometheus.CounterValue, float64(s.BargeMisses), name)
		if !ok {
			return
		}
		gauge := func(d *prometheus.Desc, v int, labels ...string) {
			ch <- prometheus.MustNewConstMetric(d, prometheus.GaugeValue, float64(v), append([]string{name}, labels...)...)
		}
		gauge(c.count, s.IdleConns, StateIdle)
		gauge(c.count, s.InUseConns, StateUsed)
		gauge(c.maxConns, s.MaxConns)
		gauge(c.idleMax, s.MaxConns)
		gauge(c.idleMin, s.MinIdle)
		gauge(c.pending, s.Waiting)
		gauge(c.leases, s.Leases)
		gauge(c.dialing, s.Dialing)
		if s.BudgetMembers > 0 {
			gauge(c.share, s.Share)
			gauge(c.demand, s.Demand)
			gauge(c.members, s.BudgetMembers)
		}
	})
}

// vecs lists the metric vectors the observers feed.
func (c *Collector) vecs() []prometheus.Collector {
	return []prometheus.Collector{
		c.createTime, c.waitTime, c.useTime,
		c.timeouts, c.dialErrors, c.rejections, c.leaks, c.closes,
	}
}
