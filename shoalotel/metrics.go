package shoalotel

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/shoalpool/shoal/internal/poolmetrics"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
	"go.opentelemetry.io/otel/trace"
)

// ScopeName is the instrumentation scope (meter name) of the metrics.
const ScopeName = "github.com/shoalpool/shoal/shoalotel"

// SchemaURL is the semantic conventions version the db.client.connection.*
// instruments follow.
const SchemaURL = "https://opentelemetry.io/schemas/1.43.0"

// Attribute keys.
const (
	// AttrPoolName is on every measurement: the name given to Metrics.Pool.
	AttrPoolName = attribute.Key("db.client.connection.pool.name")
	// AttrState is on db.client.connection.count: StateIdle or StateUsed.
	AttrState = attribute.Key("db.client.connection.state")
	// AttrCloseReason is on shoal.pool.closes: shoal.Reason.String().
	AttrCloseReason = attribute.Key("shoal.close.reason")
)

// Values of AttrState.
const (
	StateIdle = "idle"
	StateUsed = "used"
)

// DefaultBuckets returns the explicit bucket boundaries, in seconds,
// advised for the three duration histograms unless WithBuckets says
// otherwise: from 100µs, where an uncontended acquire or a loopback dial
// lands, to 10s, past any sane acquire timeout. A View in the
// MeterProvider can still override them. It is a function, not a
// variable, so that no package can change another's default.
func DefaultBuckets() []float64 { return poolmetrics.DefaultBuckets() }

// An Option configures New.
type Option interface{ apply(*config) }

type config struct {
	buckets          []float64
	tracerProvider   trace.TracerProvider
	spanThreshold    time.Duration
	spanThresholdSet bool
}

type optionFunc func(*config)

func (f optionFunc) apply(c *config) { f(c) }

// WithBuckets sets the bucket boundaries, in seconds, advised for the
// create, wait and use time histograms. Empty means DefaultBuckets().
func WithBuckets(bounds ...float64) Option {
	return optionFunc(func(c *config) { c.buckets = bounds })
}

// Metrics holds the instruments for any number of shoal pools, registered
// with Pool under distinct names. It is safe for concurrent use.
type Metrics struct {
	meter metric.Meter

	// Observable up-down counters, read from each pool's Stats by the
	// pool's callback at collection time.
	count, idleMax, idleMin, maxConns, pending, leases, dialing metric.Int64ObservableUpDownCounter
	share, demand, members                                      metric.Int64ObservableUpDownCounter // with a Budget only
	// An observable counter, read from the same Stats.
	bargeMisses metric.Int64ObservableCounter
	// Per host, read from each pool's hosts function (AttachHosts).
	hosts hostInstruments

	// Fed by the pools' observers.
	createTime, waitTime, useTime                   metric.Float64Histogram
	timeouts, dialErrors, rejections, leaks, closes metric.Int64Counter

	// The registered names. OpenTelemetry keeps a series after
	// Unregister, so a name registered again continues its barge-miss
	// count (KeepCounts) as the SDK continues its other counters.
	pools poolmetrics.Registry

	// Wait spans (waitspan.go): nil tracer when they are off.
	tracer        trace.Tracer
	spanThreshold time.Duration
}

// New creates the instruments with a meter from provider (the global
// MeterProvider when nil), and, with WithWaitSpans, the tracer for wait
// spans. The instruments are named, typed and described
// as the OpenTelemetry semantic conventions for database connection pools
// say; see the package documentation for the list.
func New(provider metric.MeterProvider, opts ...Option) (*Metrics, error) {
	cfg := config{}
	for _, o := range opts {
		o.apply(&cfg)
	}
	if len(cfg.buckets) == 0 {
		cfg.buckets = DefaultBuckets()
	}
	// Checked here, as shoalprom checks them: a MeterProvider may accept
	// any (the global one before the SDK is set does).
	if why := poolmetrics.CheckBuckets(cfg.buckets); why != "" {
		return nil, fmt.Errorf("shoalotel: WithBuckets %s", why)
	}
	if provider == nil {
		provider = otel.GetMeterProvider()
	}
	meter := provider.Meter(ScopeName, metric.WithSchemaURL(SchemaURL))

	var errs []error
	check := func(err error) {
		if err != nil {
			errs = append(errs, err)
		}
	}
	gauge := func(name, unit, desc string) metric.Int64ObservableUpDownCounter {
		inst, err := meter.Int64ObservableUpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		check(err)
		return inst
	}
	histogram := func(name, desc string) metric.Float64Histogram {
		inst, err := meter.Float64Histogram(name, metric.WithUnit("s"), metric.WithDescription(desc),
			metric.WithExplicitBucketBoundaries(cfg.buckets...))
		check(err)
		return inst
	}
	observableCounter := func(name, unit, desc string) metric.Int64ObservableCounter {
		inst, err := meter.Int64ObservableCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		check(err)
		return inst
	}
	counter := func(name, unit, desc string) metric.Int64Counter {
		inst, err := meter.Int64Counter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		check(err)
		return inst
	}
	m := &Metrics{
		meter:    meter,
		count:    gauge("db.client.connection.count", "{connection}", "The number of connections that are currently in state described by the `state` attribute."),
		idleMax:  gauge("db.client.connection.idle.max", "{connection}", "The maximum number of idle open connections allowed."),
		idleMin:  gauge("db.client.connection.idle.min", "{connection}", "The minimum number of idle open connections allowed."),
		maxConns: gauge("db.client.connection.max", "{connection}", "The maximum number of open connections allowed."),
		pending:  gauge("db.client.connection.pending_requests", "{request}", "The number of current pending requests for an open connection."),
		leases:   gauge("shoal.pool.leases", "{lease}", "The number of leases held now; above the used connections when connections are multiplexed."),
		dialing:  gauge("shoal.pool.dialing", "{connection}", "The number of dials in flight."),
		share:    gauge("shoal.pool.budget.share", "{connection}", "The connections the pool's Budget lets it hold now (Stats.Share); only for a pool with a Budget."),
		demand:   gauge("shoal.pool.budget.demand", "{connection}", "The connections the pool would use now, in use plus waited for (Stats.Demand); only for a pool with a Budget."),
		members:  gauge("shoal.pool.budget.members", "{pool}", "The pools sharing the pool's Budget, this one included (Stats.BudgetMembers); only for a pool with a Budget."),

		bargeMisses: observableCounter("shoal.pool.barge_misses", "{connection}", "The number of connections a barging release left idle while someone waited, until the barging timer handed them over; each suspends barging for 100ms. Stays 0 without Config.BargeWindow."),

		createTime: histogram("db.client.connection.create_time", "The time it took to create a new connection."),
		waitTime:   histogram("db.client.connection.wait_time", "The time it took to obtain an open connection from the pool."),
		useTime:    histogram("db.client.connection.use_time", "The time between borrowing a connection and returning it to the pool."),

		timeouts:   counter("db.client.connection.timeouts", "{timeout}", "The number of connection timeouts that have occurred trying to obtain a connection from the pool."),
		dialErrors: counter("shoal.pool.dial_errors", "{error}", "The number of dials that failed (the Budget's permit, Dial or the OnConnect hook)."),
		rejections: counter("shoal.pool.rejections", "{request}", "The number of acquires refused by MaxWaiters or dropped by load shedding."),
		leaks:      counter("shoal.pool.leaks", "{lease}", "The number of leases reported as held past Config.LeakThreshold."),
		closes:     counter("shoal.pool.closes", "{connection}", "The number of connections the pool closed, by reason."),

		hosts: newHostInstruments(meter, check),

		pools: poolmetrics.Registry{Package: "shoalotel", ErrDuplicate: ErrDuplicatePool, KeepCounts: true},
	}
	if err := errors.Join(errs...); err != nil {
		return nil, fmt.Errorf("shoalotel: creating instruments: %w", err)
	}
	if cfg.spanThresholdSet && cfg.spanThreshold >= 0 {
		tp := cfg.tracerProvider
		if tp == nil {
			tp = otel.GetTracerProvider()
		}
		m.tracer = tp.Tracer(ScopeName, trace.WithSchemaURL(SchemaURL))
		m.spanThreshold = cfg.spanThreshold
	}
	return m, nil
}

// ErrDuplicatePool is returned by Metrics.Pool for a name already in use.
var ErrDuplicatePool = errors.New("shoalotel: pool name already registered")

// Pool registers a pool under name and returns its metrics, to be set as
// the pool's Config.Observer (or an adapter's Observer option). The pool
// attaches itself when it is created, and from then on its observable
// instruments (connection counts, limits, pending requests) are reported
// (see PoolMetrics.Attach).
//
// name becomes the db.client.connection.pool.name attribute: choose it
// yourself, or make it with OriginName, and never let it carry a password
// (one in it is masked where it stands all the same, as in
// shoal.Config.Name, and Name returns the masked name). It must be valid
// UTF-8 and not in use in these Metrics (the error wraps
// ErrDuplicatePool); after PoolMetrics.Unregister the name is free again.
// An empty name means the pool's own: the metrics take the name of the
// pool that attaches them (shoal.Config.Name, or the one the pool made up;
// see PoolMetrics.Attach), and record nothing until one does.
//
// The pool's counters start at zero at once, so that a backend computing
// rates sees their first increase.
func (m *Metrics) Pool(name string) (*PoolMetrics, error) {
	if name == "" {
		return &PoolMetrics{metrics: m, late: new(poolmetrics.Deferred[PoolMetrics])}, nil
	}
	var p *PoolMetrics
	_, err := m.pools.Register(name, func(pool *poolmetrics.Pool) error {
		p = newPoolMetrics(m, pool)
		reg, err := m.meterRegister(p)
		if err != nil {
			// The registered name: a password in name is masked there.
			return fmt.Errorf("shoalotel: registering pool %q: %w", pool.Name(), err)
		}
		p.registration = reg
		return nil
	})
	if err != nil {
		return nil, err
	}
	ctx := context.Background()
	for _, c := range []metric.Int64Counter{m.timeouts, m.dialErrors, m.rejections, m.leaks} {
		c.Add(ctx, 0, p.addOpts...)
	}
	for _, opts := range p.closeOpts {
		if opts != nil {
			m.closes.Add(ctx, 0, opts...)
		}
	}
	return p, nil
}

// meterRegister registers p's callback for the observable instruments.
func (m *Metrics) meterRegister(p *PoolMetrics) (metric.Registration, error) {
	observables := append([]metric.Observable{
		m.count, m.idleMax, m.idleMin, m.maxConns, m.pending, m.leases, m.dialing,
		m.share, m.demand, m.members, m.bargeMisses,
	}, m.hosts.observables()...)
	return m.meter.RegisterCallback(p.observe, observables...)
}
