package poolmetrics

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/namemask"
)

// Deferred is the state of a package's pool metrics made without a name
// (shoalprom's Collector.Pool(""), shoalotel's Metrics.Pool("")): they are
// named after the first pool that attaches them, by its Stats.Name, and
// until then record nothing (a pool attaches its Observer in shoal.New,
// before it can report anything). M is the package's PoolMetrics, bound
// to the name as Pool(name) makes it. Its methods are safe for concurrent
// use.
type Deferred[M any] struct {
	bound atomic.Pointer[M]

	mu      sync.Mutex
	hosts   *earlyHosts // attached before the name was known
	removed bool        // unregistered before it was bound
}

// earlyHosts is a hosts function attached before the metrics were named,
// with an identity, so that its detach can tell whether it is still the
// one attached, and, once Bind attached it to the bound metrics, the
// detach that undoes that.
type earlyHosts struct {
	hosts  func() []shoal.HostStat
	detach func() // set by Bind
}

// Load returns the bound metrics, or nil before a pool attached them.
func (d *Deferred[M]) Load() *M { return d.bound.Load() }

// Bind names the metrics after stats().Name, made valid UTF-8 and masked
// (namemask), once: the first free of that name, name-2, name-3 and so
// on, so that two pools given the same Name are both reported. newPool
// makes the metrics under a name masked as namemask.Mask masks it (as
// Registry.Register does) and fails with an error for which dup is true
// when that name is taken; attachHosts gives them a hosts function
// attached before they were named, and returns its detach. Bind returns
// the bound metrics, or nil when they were unregistered first, when a
// name tried masks to one tried before (an error naming it is returned:
// no later try would find a free name), or when newPool failed otherwise
// (its error is returned).
func (d *Deferred[M]) Bind(stats func() shoal.Stats, newPool func(name string) (*M, error), dup error,
	attachHosts func(m *M, hosts func() []shoal.HostStat) (detach func())) (*M, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if m := d.bound.Load(); m != nil || d.removed {
		return m, nil
	}
	// A label value must be valid UTF-8, and Register refuses a name
	// that is not; a pool's own name is never checked, so it is made
	// valid here, as a host's address is (MergeHosts).
	base := strings.ToValidUTF8(stats().Name, "\uFFFD")
	if base == "" {
		base = "pool" // a Stats function of another kind than a shoal pool's
	}
	// Masked before a suffix goes after it: a Stats function of another
	// kind may give a name unmasked, and one whose password value ends
	// in a backslash would escape any suffix into that value. Masked,
	// the value no longer takes in what follows (Suffixed).
	base = namemask.Mask(base)
	tried := make(map[string]bool)
	for i := 1; ; i++ {
		name := base
		if i > 1 {
			// Suffixed: after a name ending in a bare password value
			// ("orders password=xxxxx") the suffix would be masked with
			// it, as newPool masks the name, and every try would be
			// the name taken.
			name = namemask.Suffixed(base, "-"+strconv.Itoa(i))
		}
		// Each try must be a name not tried before, or the loop would
		// never end: newPool would find the same name taken each time.
		masked := namemask.Mask(name)
		if tried[masked] {
			return nil, fmt.Errorf("pool %q: no free name for its metrics: %q masks to a name tried before", base, masked)
		}
		tried[masked] = true
		m, err := newPool(name)
		if errors.Is(err, dup) {
			continue
		}
		if err != nil {
			return nil, err
		}
		if h := d.hosts; h != nil {
			h.detach = attachHosts(m, h.hosts)
			d.hosts = nil
		}
		d.bound.Store(m)
		return m, nil
	}
}

// AttachHosts keeps hosts for the metrics to attach once they are named,
// when they are not yet, replacing any kept before (nil just removes it):
// bound is nil then, and detach forgets hosts, or detaches it from the
// bound metrics once Bind attached it there. Like a detach after the
// naming, it does nothing once hosts was replaced, and nothing the second
// time. Once named it returns the bound metrics, for the caller to attach
// hosts to.
func (d *Deferred[M]) AttachHosts(hosts func() []shoal.HostStat) (bound *M, detach func()) {
	d.mu.Lock()
	defer d.mu.Unlock()
	if m := d.bound.Load(); m != nil {
		return m, nil
	}
	if hosts == nil {
		d.hosts = nil
		return nil, func() {}
	}
	h := &earlyHosts{hosts: hosts}
	d.hosts = h
	return nil, func() {
		d.mu.Lock()
		defer d.mu.Unlock()
		if d.hosts == h {
			d.hosts = nil
		}
		if h.detach != nil {
			h.detach() // does nothing once the bound metrics' hosts were replaced
			h.detach = nil
		}
	}
}

// Remove marks the metrics unregistered, so that no later pool names them,
// and returns the bound ones (nil if none), for the caller to unregister.
func (d *Deferred[M]) Remove() *M {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.removed = true
	d.hosts = nil
	return d.bound.Load()
}
