package poolmetrics

import (
	"errors"
	"fmt"
	"sync"
	"unicode/utf8"

	"github.com/shoalpool/shoal/internal/namemask"
)

// Registry is the set of pool names one shoalprom Collector or shoalotel
// Metrics watches, each with its Pool. Set Package and ErrDuplicate before
// the first Register; the rest of the zero value is ready. It is safe for
// concurrent use.
type Registry struct {
	// Package names the package in errors: "shoalprom".
	Package string
	// ErrDuplicate is the package's error for a name already registered;
	// Register wraps it.
	ErrDuplicate error
	// KeepCounts makes a name registered again continue the barge-miss
	// count its earlier registrations reached. A backend that keeps a
	// series after Unregister (OpenTelemetry) needs it, or the counter
	// would read as falling; one that deletes the name's series
	// (Prometheus) starts the name again from zero, as its other counters.
	KeepCounts bool

	mu    sync.Mutex
	pools map[string]*Pool
	// carried is, with KeepCounts, the barge-miss count each unregistered
	// name reached, for its next registration to continue.
	carried map[string]int64
}

// Register adds a Pool under name and returns it. bind, when not nil,
// makes what the package keeps for the pool (metric children bound to
// the name, a callback) and runs under the registry's lock before the
// pool is added: when it fails, the name stays free and its error is
// returned as it is.
//
// name must be non-empty, valid UTF-8 (it becomes a label value) and not
// registered already (the error wraps ErrDuplicate); once its Pool is
// unregistered it is free again. A password in it is masked where it
// stands (namemask), before it is compared with the names registered, so
// the Pool's Name is the masked name.
func (r *Registry) Register(name string, bind func(*Pool) error) (*Pool, error) {
	if name == "" {
		return nil, errors.New(r.Package + ": pool name is empty")
	}
	if !utf8.ValidString(name) {
		return nil, errors.New(r.Package + ": pool name is not valid UTF-8")
	}
	// Masked as the core masks a pool's Config.Name: the name goes into
	// every series, and into the error below.
	name = namemask.Mask(name)
	r.mu.Lock()
	defer r.mu.Unlock()
	if _, ok := r.pools[name]; ok {
		return nil, fmt.Errorf("%w: %q", r.ErrDuplicate, name)
	}
	p := &Pool{name: name, registry: r, carried: r.carried[name]}
	if bind != nil {
		if err := bind(p); err != nil {
			return nil, err
		}
	}
	if r.pools == nil {
		r.pools = make(map[string]*Pool)
	}
	r.pools[name] = p
	return p, nil
}

// Each calls f for every registered pool, outside the registry's lock:
// f reads the pool's Stats, which walks the pool, and a slow one must not
// hold up Register or Unregister. A pool unregistered after the list was
// taken is skipped when its turn comes, so that what f reports of it does
// not outlive the Unregister.
func (r *Registry) Each(f func(*Pool)) {
	r.mu.Lock()
	pools := make([]*Pool, 0, len(r.pools))
	for _, p := range r.pools {
		pools = append(pools, p)
	}
	r.mu.Unlock()
	for _, p := range pools {
		if p.Removed() {
			continue
		}
		f(p)
	}
}

// unregister removes p, if it is still the pool registered under its
// name, keeping last as the name's barge-miss count with KeepCounts, and
// then calls forget under the lock. It reports whether p was removed.
func (r *Registry) unregister(p *Pool, last int64, forget func()) bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.pools[p.name] != p {
		return false
	}
	delete(r.pools, p.name)
	if r.KeepCounts {
		if r.carried == nil {
			r.carried = make(map[string]int64)
		}
		r.carried[p.name] = last
	}
	if forget != nil {
		forget()
	}
	return true
}
