package shoalprom

import (
	"github.com/prometheus/client_golang/prometheus"
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/poolmetrics"
)

// Label names of the per-host gauges (PoolMetrics.AttachHosts), on top of
// LabelPoolName.
const (
	LabelHost = "host" // shoal.HostStat.Addr, on every per-host gauge
	LabelRole = "role" // shoal_pool_host_role: shoal.HostStat.Role
)

// hostDescs are the per-host gauges, made at scrape time from each pool's
// attached hosts function.
type hostDescs struct {
	open, role, lastCheck, lag *prometheus.Desc
	// off: ConstLabels name host or role, which these gauges use as
	// variable labels; a Desc with both would make the whole Collector
	// fail to register, so the per-host gauges are left out instead.
	off bool
}

func newHostDescs(opts Options) hostDescs {
	desc := func(name, help string, labels ...string) *prometheus.Desc {
		return prometheus.NewDesc(prometheus.BuildFQName(opts.Namespace, "", name), help,
			append([]string{LabelPoolName, LabelHost}, labels...), opts.ConstLabels)
	}
	if _, ok := opts.ConstLabels[LabelHost]; ok {
		return hostDescs{off: true}
	}
	if _, ok := opts.ConstLabels[LabelRole]; ok {
		return hostDescs{off: true}
	}
	return hostDescs{
		open:      desc("shoal_pool_host_connection_open", "The number of the pool's connections open to the server named by the host label."),
		role:      desc("shoal_pool_host_role", "The server's role as last checked, in the role label, in the adapter's words (shoalpgx: primary, read-only, standby or unknown); always 1, one series per host.", LabelRole),
		lastCheck: desc("shoal_pool_host_last_check_timestamp_seconds", "When the server's role and lag were last read, in seconds since the Unix epoch; only for a server checked at least once."),
		lag:       desc("shoal_pool_host_lag_seconds", "How far the server was behind the one it replicates at its last check (0 for one that replicates nothing); only for a server checked at least once."),
	}
}

func (d hostDescs) describe(ch chan<- *prometheus.Desc) {
	if d.off {
		return
	}
	ch <- d.open
	ch <- d.role
	ch <- d.lastCheck
	ch <- d.lag
}

// collect reports the hosts of p, if a hosts function is attached.
func (d hostDescs) collect(ch chan<- prometheus.Metric, p *poolmetrics.Pool) {
	if d.off {
		return
	}
	hosts, ok := p.Hosts()
	if !ok {
		return
	}
	for _, h := range hosts {
		gauge := func(desc *prometheus.Desc, v float64, labels ...string) {
			ch <- prometheus.MustNewConstMetric(desc, prometheus.GaugeValue, v, append([]string{p.Name(), h.Addr}, labels...)...)
		}
		gauge(d.open, float64(h.Open))
		gauge(d.role, 1, h.Role)
		// Lag is read with the role: without a check there is no lag to
		// report, and a 0 would pass for a standby that is caught up.
		if !h.LastCheck.IsZero() {
			gauge(d.lastCheck, poolmetrics.UnixSeconds(h.LastCheck))
			gauge(d.lag, h.Lag.Seconds())
		}
	}
}

// AttachHosts gives the metrics a function returning what the pool knows
// of each server its connections go to, called at each scrape for the
// per-host gauges, each with the labels pool_name and host
// (shoal.HostStat.Addr):
//
//	shoal_pool_host_connection_open               connections open to the host
//	shoal_pool_host_role{role}                    1, with the host's current role
//	shoal_pool_host_last_check_timestamp_seconds  when the role was last read (omitted before the first check)
//	shoal_pool_host_lag_seconds                   replication lag at that check (omitted before the first check)
//
// A pool of several servers, shoalpgx's with several hosts in its
// connection string, offers such a function (its Pool.Hosts); no pool
// attaches it itself. hosts runs in the scraping goroutine and must be
// safe to call concurrently with the pool's use. Entries with the same
// Addr are reported as one (Open added up, the role of the latest check),
// an empty Role as "unknown", and an entry with an empty Addr not at all.
//
// One function is attached at a time: calling AttachHosts again replaces
// the earlier one, and nil just removes it. AttachHosts returns the
// function that detaches hosts, after which its series are no longer
// reported; it does nothing once hosts was replaced, and calling it twice
// does nothing. Unregister ends the per-host gauges too.
func (m *PoolMetrics) AttachHosts(hosts func() []shoal.HostStat) (detach func()) {
	if m.late != nil {
		b, detach := m.late.AttachHosts(hosts)
		if b == nil {
			return detach // attached when a pool names the metrics
		}
		return b.AttachHosts(hosts)
	}
	return m.pool.AttachHosts(hosts)
}
