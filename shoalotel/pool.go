package shoalotel

import (
	"context"
	"fmt"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/poolmetrics"
	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// PoolMetrics are the metrics of one pool in Metrics. They implement
// shoal.Observer: set them as the pool's Config.Observer. Make them with
// Metrics.Pool. Their methods are safe for concurrent use.
type PoolMetrics struct {
	metrics      *Metrics
	pool         *poolmetrics.Pool // the name, its attached Stats and hosts
	registration metric.Registration
	// late, for metrics made without a name, holds the metrics bound to
	// the name of the pool that attached them; every method forwards to
	// them. nil for metrics made with a name.
	late *poolmetrics.Deferred[PoolMetrics]

	// Option slices built once, in Pool, around precomputed attribute
	// sets: passing them to Record and Add builds no set, sorts nothing
	// and allocates nothing per event.
	recordOpts  []metric.RecordOption
	addOpts     []metric.AddOption
	closeOpts   [][]metric.AddOption   // by shoal.Reason
	observeOpts []metric.ObserveOption // the pool name alone
	idleOpts    []metric.ObserveOption // with state=idle
	usedOpts    []metric.ObserveOption // with state=used
}

var _ shoal.Observer = (*PoolMetrics)(nil)

// newPoolMetrics makes the metrics of pool, with their option slices.
func newPoolMetrics(m *Metrics, pool *poolmetrics.Pool) *PoolMetrics {
	name := pool.Name()
	opt := metric.WithAttributeSet(attribute.NewSet(AttrPoolName.String(name)))
	reasons := poolmetrics.ReasonLabels()
	p := &PoolMetrics{
		metrics:     m,
		pool:        pool,
		recordOpts:  []metric.RecordOption{opt},
		addOpts:     []metric.AddOption{opt},
		observeOpts: []metric.ObserveOption{opt},
		idleOpts: []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(
			AttrPoolName.String(name), AttrState.String(StateIdle)))},
		usedOpts: []metric.ObserveOption{metric.WithAttributeSet(attribute.NewSet(
			AttrPoolName.String(name), AttrState.String(StateUsed)))},
		closeOpts: make([][]metric.AddOption, len(reasons)),
	}
	for r, label := range reasons {
		if label != "" {
			p.closeOpts[r] = []metric.AddOption{metric.WithAttributeSet(attribute.NewSet(
				AttrPoolName.String(name), AttrCloseReason.String(label)))}
		}
	}
	return p
}

// Name returns the pool's name, its db.client.connection.pool.name; ""
// for metrics made without a name until a pool attaches them.
func (p *PoolMetrics) Name() string {
	if p.late != nil {
		if b := p.late.Load(); b != nil {
			return b.Name()
		}
		return ""
	}
	return p.pool.Name()
}

// Attach gives the metrics a pool's Stats method, called at
// each collection for the observable instruments: connections idle and
// used, pending requests, dials in flight, leases, the limits and
// shoal.pool.barge_misses. Until a pool is attached the up-down counters
// are not reported for this name; shoal.pool.barge_misses is, at zero, as
// the other counters are. stats runs in the collecting goroutine and must
// be safe to call concurrently with the pool's use, as shoal's Pool.Stats
// is.
//
// A pool whose Config.Observer is these metrics (directly or through
// shoal.MultiObserver) attaches itself: shoal.New calls Attach, and the
// pool detaches when it is closed. Call Attach yourself only for a Stats
// function no pool attaches, or the gauges count that pool twice.
//
// Usually one pool is attached for its whole life. When several pools
// share the name, one after another with overlap (a shoalhttp origin whose
// pool was replaced while the old one drains), make all of them use these
// metrics as Observer (each attaches itself): their values are summed, and their
// counters and histograms add up already. Attach returns the function that
// detaches stats again. Calling it twice does nothing.
//
// Metrics made without a name (Metrics.Pool("")) take the name of the
// first pool that attaches them, its Stats.Name (shoal.Config.Name, or
// the name the pool made up); when another pool of the Metrics has that
// name already, the first free of name-2, name-3 and so on.
func (p *PoolMetrics) Attach(stats func() shoal.Stats) (detach func()) {
	if p.late != nil {
		b, err := p.late.Bind(stats, p.metrics.Pool, ErrDuplicatePool, func(b *PoolMetrics, hosts func() []shoal.HostStat) func() { return b.AttachHosts(hosts) })
		if err != nil {
			otel.Handle(err) // the MeterProvider refused the callback, or no free name was found
		}
		if b == nil {
			return func() {}
		}
		return b.Attach(stats)
	}
	return p.pool.Attach(stats)
}

// Unregister removes the pool's callback, so that its observable
// instruments are no longer reported, and frees its name for Pool.
// OpenTelemetry has no way to delete a series, so what the pool's
// counters and histograms recorded stays in a MeterProvider that
// aggregates cumulatively; registering the name again continues them.
// The methods of p stay safe to call afterwards. Calling it again does
// nothing.
//
// It returns no error, as shoalprom's does not: there is nothing a caller
// could do about one. The OpenTelemetry API lets a MeterProvider refuse to
// drop a callback (the SDK never does); such a refusal goes to
// otel.Handle, the global error handler, where OpenTelemetry sends the
// errors it cannot return, and the callback it keeps reports nothing more.
func (p *PoolMetrics) Unregister() {
	if p.late != nil {
		if b := p.late.Remove(); b != nil {
			b.Unregister()
		}
		return
	}
	p.pool.Unregister(nil)
	if err := p.registration.Unregister(); err != nil {
		otel.Handle(fmt.Errorf("shoalotel: unregistering pool %q: %w", p.pool.Name(), err))
	}
}

// observe is the pool's callback for the observable instruments.
func (p *PoolMetrics) observe(_ context.Context, o metric.Observer) error {
	// A MeterProvider may refuse to drop the callback at Unregister, and
	// keep calling it: what it would report then outlives the Unregister,
	// and adds to what a pool registered next under the name reports.
	if p.pool.Removed() {
		return nil
	}
	p.observeHosts(o)
	s, ok := p.pool.Gauges()
	m := p.metrics
	// After Gauges, which notes each attached pool's count; reported from
	// registration, at zero until a pool is attached.
	o.ObserveInt64(m.bargeMisses, s.BargeMisses, p.observeOpts...)
	if !ok {
		return nil
	}
	o.ObserveInt64(m.count, int64(s.IdleConns), p.idleOpts...)
	o.ObserveInt64(m.count, int64(s.InUseConns), p.usedOpts...)
	o.ObserveInt64(m.maxConns, int64(s.MaxConns), p.observeOpts...)
	o.ObserveInt64(m.idleMax, int64(s.MaxConns), p.observeOpts...)
	o.ObserveInt64(m.idleMin, int64(s.MinIdle), p.observeOpts...)
	o.ObserveInt64(m.pending, int64(s.Waiting), p.observeOpts...)
	o.ObserveInt64(m.leases, int64(s.Leases), p.observeOpts...)
	o.ObserveInt64(m.dialing, int64(s.Dialing), p.observeOpts...)
	if s.BudgetMembers > 0 {
		o.ObserveInt64(m.share, int64(s.Share), p.observeOpts...)
		o.ObserveInt64(m.demand, int64(s.Demand), p.observeOpts...)
		o.ObserveInt64(m.members, int64(s.BudgetMembers), p.observeOpts...)
	}
	return nil
}

// ObserveAcquire records wait in db.client.connection.wait_time.
func (p *PoolMetrics) ObserveAcquire(wait time.Duration) {
	if p.late != nil {
		if b := p.late.Load(); b != nil {
			b.ObserveAcquire(wait)
		}
		return
	}
	p.metrics.waitTime.Record(context.Background(), wait.Seconds(), p.recordOpts...)
}

// ObserveRelease records held in db.client.connection.use_time.
func (p *PoolMetrics) ObserveRelease(held time.Duration) {
	if p.late != nil {
		if b := p.late.Load(); b != nil {
			b.ObserveRelease(held)
		}
		return
	}
	p.metrics.useTime.Record(context.Background(), held.Seconds(), p.recordOpts...)
}

// ObserveDial records a successful dial's duration in
// db.client.connection.create_time and counts a failed one in
// shoal.pool.dial_errors.
func (p *PoolMetrics) ObserveDial(took time.Duration, err error) {
	if p.late != nil {
		if b := p.late.Load(); b != nil {
			b.ObserveDial(took, err)
		}
		return
	}
	if err != nil {
		p.metrics.dialErrors.Add(context.Background(), 1, p.addOpts...)
		return
	}
	p.metrics.createTime.Record(context.Background(), took.Seconds(), p.recordOpts...)
}

// ObserveClose counts a closed connection in shoal.pool.closes under its
// reason.
func (p *PoolMetrics) ObserveClose(reason shoal.Reason) {
	if p.late != nil {
		if b := p.late.Load(); b != nil {
			b.ObserveClose(reason)
		}
		return
	}
	if r := int(reason); r > 0 && r < len(p.closeOpts) && p.closeOpts[r] != nil {
		p.metrics.closes.Add(context.Background(), 1, p.closeOpts[r]...)
		return
	}
	// A reason this package did not know when the pool was registered:
	// rare, so building its attribute set here is acceptable.
	p.metrics.closes.Add(context.Background(), 1, metric.WithAttributes(
		AttrPoolName.String(p.pool.Name()), AttrCloseReason.String(reason.String())))
}

// ObserveReject counts in shoal.pool.rejections an acquire refused by
// MaxWaiters or dropped by load shedding.
func (p *PoolMetrics) ObserveReject() {
	if p.late != nil {
		if b := p.late.Load(); b != nil {
			b.ObserveReject()
		}
		return
	}
	p.metrics.rejections.Add(context.Background(), 1, p.addOpts...)
}

// ObserveTimeout counts in db.client.connection.timeouts an acquire whose
// context ended while it waited: a deadline or a cancellation, which the
// pool does not tell apart. Its wait is not recorded in wait_time: it
// obtained no connection.
func (p *PoolMetrics) ObserveTimeout(waited time.Duration) {
	if p.late != nil {
		if b := p.late.Load(); b != nil {
			b.ObserveTimeout(waited)
		}
		return
	}
	p.metrics.timeouts.Add(context.Background(), 1, p.addOpts...)
}

// ObserveLeak counts a lease held past Config.LeakThreshold in
// shoal.pool.leaks. The report's stack goes to the pool's Logger, not to
// metrics.
func (p *PoolMetrics) ObserveLeak(r shoal.LeakReport) {
	if p.late != nil {
		if b := p.late.Load(); b != nil {
			b.ObserveLeak(r)
		}
		return
	}
	p.metrics.leaks.Add(context.Background(), 1, p.addOpts...)
}
