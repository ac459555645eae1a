package shoalotel

import (
	"net"
	"strconv"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/poolmetrics"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/metric"
)

// Attribute keys of the per-host instruments (PoolMetrics.AttachHosts), on
// top of AttrPoolName.
const (
	// AttrServerAddress is on every per-host instrument: the host part of
	// shoal.HostStat.Addr, or all of Addr when it is not host:port.
	AttrServerAddress = attribute.Key("server.address")
	// AttrServerPort is on every per-host instrument whose Addr is
	// host:port with a numeric port: the port, an int.
	AttrServerPort = attribute.Key("server.port")
	// AttrHostRole is on shoal.pool.host.role: shoal.HostStat.Role. The
	// semantic conventions name no role of a server, and advise against
	// inventing names in their namespaces, so it is under shoal. as
	// AttrCloseReason is.
	AttrHostRole = attribute.Key("shoal.host.role")
)

// hostInstruments are the per-host instruments, read from each pool's
// attached hosts function by the pool's callback.
type hostInstruments struct {
	open, role     metric.Int64ObservableUpDownCounter
	lastCheck, lag metric.Float64ObservableGauge
}

// newHostInstruments creates the per-host instruments, handing any error
// to check.
func newHostInstruments(meter metric.Meter, check func(error)) hostInstruments {
	upDown := func(name, unit, desc string) metric.Int64ObservableUpDownCounter {
		inst, err := meter.Int64ObservableUpDownCounter(name, metric.WithUnit(unit), metric.WithDescription(desc))
		check(err)
		return inst
	}
	gauge := func(name, desc string) metric.Float64ObservableGauge {
		inst, err := meter.Float64ObservableGauge(name, metric.WithUnit("s"), metric.WithDescription(desc))
		check(err)
		return inst
	}
	return hostInstruments{
		open:      upDown("shoal.pool.host.connection.open", "{connection}", "The number of the pool's connections open to the server named by server.address and server.port."),
		role:      upDown("shoal.pool.host.role", "{host}", "The server's role as last checked, in shoal.host.role, in the adapter's words (shoalpgx: primary, read-only, standby or unknown); always 1, one point per host."),
		lastCheck: gauge("shoal.pool.host.last_check.timestamp", "When the server's role and lag were last read, in seconds since the Unix epoch; only for a server checked at least once."),
		lag:       gauge("shoal.pool.host.lag", "How far the server was behind the one it replicates at its last check (0 for one that replicates nothing); only for a server checked at least once."),
	}
}

// observables lists the instruments, for RegisterCallback.
func (h hostInstruments) observables() []metric.Observable {
	return []metric.Observable{h.open, h.role, h.lastCheck, h.lag}
}

// observeHosts reports the hosts of p, if a hosts function is attached.
// The attribute sets are built here, per collection: hosts come and go
// with the pool's configuration, and a collection is no hot path.
func (p *PoolMetrics) observeHosts(o metric.Observer) {
	hosts, ok := p.pool.Hosts()
	if !ok {
		return
	}
	inst := p.metrics.hosts
	for _, h := range hosts {
		attrs := append([]attribute.KeyValue{AttrPoolName.String(p.pool.Name())}, serverAttrs(h.Addr)...)
		opt := metric.WithAttributeSet(attribute.NewSet(attrs...))
		o.ObserveInt64(inst.open, int64(h.Open), opt)
		o.ObserveInt64(inst.role, 1, metric.WithAttributeSet(attribute.NewSet(append(attrs, AttrHostRole.String(h.Role))...)))
		// Lag is read with the role: without a check there is no lag to
		// report, and a 0 would pass for a standby that is caught up.
		if !h.LastCheck.IsZero() {
			o.ObserveFloat64(inst.lastCheck, poolmetrics.UnixSeconds(h.LastCheck), opt)
			o.ObserveFloat64(inst.lag, h.Lag.Seconds(), opt)
		}
	}
}

// serverAttrs returns server.address and server.port for addr, or
// server.address alone, all of addr, when addr does not split into a
// host and a numeric port: a socket path, or a host with no port.
func serverAttrs(addr string) []attribute.KeyValue {
	host, port, err := net.SplitHostPort(addr)
	if err == nil && host != "" {
		if n, err := strconv.ParseUint(port, 10, 16); err == nil {
			return []attribute.KeyValue{AttrServerAddress.String(host), AttrServerPort.Int(int(n))}
		}
	}
	return []attribute.KeyValue{AttrServerAddress.String(addr)}
}

// AttachHosts gives the metrics a function returning what the pool knows
// of each server its connections go to, called at each collection for the
// per-host instruments, each with db.client.connection.pool.name,
// server.address and, when shoal.HostStat.Addr is host:port, server.port:
//
//	shoal.pool.host.connection.open       {connection}  connections open to the host
//	shoal.pool.host.role                  {host}        1, with shoal.host.role = the host's current role
//	shoal.pool.host.last_check.timestamp  s             when the role was last read, Unix time (omitted before the first check)
//	shoal.pool.host.lag                   s             replication lag at that check (omitted before the first check)
//
// A pool of several servers, shoalpgx's with several hosts in its
// connection string, offers such a function (its Pool.Hosts); no pool
// attaches it itself. hosts runs in the collecting goroutine and must be
// safe to call concurrently with the pool's use. Entries with the same
// Addr are reported as one (Open added up, the role of the latest check),
// an empty Role as "unknown", and an entry with an empty Addr not at all.
//
// One function is attached at a time: calling AttachHosts again replaces
// the earlier one, and nil just removes it. AttachHosts returns the
// function that detaches hosts, after which its points are no longer
// reported; it does nothing once hosts was replaced, and calling it twice
// does nothing. Unregister ends the per-host instruments too.
func (p *PoolMetrics) AttachHosts(hosts func() []shoal.HostStat) (detach func()) {
	if p.late != nil {
		b, detach := p.late.AttachHosts(hosts)
		if b == nil {
			return detach // attached when a pool names the metrics
		}
		return b.AttachHosts(hosts)
	}
	return p.pool.AttachHosts(hosts)
}
