package poolmetrics

import (
	"sync/atomic"

	"github.com/shoalpool/shoal"
)

// Pool is one name in a Registry: the Stats functions of the pools that
// report under it (Attach) and the hosts function (AttachHosts), read at
// each scrape or collection. Its methods are safe for concurrent use.
type Pool struct {
	name     string
	registry *Registry
	sources  Sources
	hosts    Hosts
	// carried is what earlier registrations of the name counted in barge
	// misses (Registry.KeepCounts), so that registering the name again
	// continues the counter instead of starting it at zero.
	carried int64
	removed atomic.Bool
}

// Name returns the name the pool was registered under.
func (p *Pool) Name() string { return p.name }

// Attach adds a pool's Stats function to the name and returns the
// function that removes it again (see Sources.Attach).
func (p *Pool) Attach(stats func() shoal.Stats) (detach func()) {
	return p.sources.Attach(stats)
}

// AttachHosts makes hosts the name's hosts function, replacing any
// earlier one, and returns the function that removes it again (see
// Hosts.Attach).
func (p *Pool) AttachHosts(hosts func() []shoal.HostStat) (detach func()) {
	return p.hosts.Attach(hosts)
}

// Gauges calls every attached Stats function and adds up their values
// (see Sources.Gauges); ok is false when none is attached. BargeMisses,
// a counter, is set either way, and includes what earlier registrations
// of the name counted.
func (p *Pool) Gauges() (total shoal.Stats, ok bool) {
	total, ok = p.sources.Gauges()
	total.BargeMisses += p.carried
	return total, ok
}

// Hosts calls the hosts function and returns its hosts made fit for
// labels (see Hosts.Read); ok is false when none is attached.
func (p *Pool) Hosts() (hosts []shoal.HostStat, ok bool) {
	return p.hosts.Read()
}

// Removed reports whether Unregister was called.
func (p *Pool) Removed() bool { return p.removed.Load() }

// Unregister removes the pool from its registry and frees its name. When
// the pool was still the one registered under its name, forget (if not
// nil) runs under the registry's lock, so that what it removes (a name's
// series) cannot be a new registration's: that waits for it. Calling
// Unregister again does nothing.
func (p *Pool) Unregister(forget func()) {
	p.removed.Store(true)
	var last int64
	if p.registry.KeepCounts {
		// The last count is read outside the registry's lock: the pools'
		// Stats take none of its locks, but they walk the pool.
		s, _ := p.Gauges()
		last = s.BargeMisses
	}
	p.registry.unregister(p, last, forget)
}
