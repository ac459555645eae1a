package shoaldebug

import (
	"cmp"
	"slices"
	"sync"

	"github.com/shoalpool/shoal"
)

// Registry is a set of pools a page lists. Most programs use Default
// through the package's functions; a Registry of its own serves a second
// page, or keeps a test's pools apart.
type Registry struct {
	mu      sync.Mutex
	next    uint64
	pools   map[uint64]*entry
	budgets map[uint64]*budgetEntry // budgets.go
}

// entry is one registered pool.
type entry struct {
	seq   uint64 // registration order, which is the page's order
	name  string // masked; "" for the pool's own, read with its Stats
	stats func() shoal.Stats
	obs   *Observer // nil for a pool registered with Register
}

// Default is the registry Handler, Register and NewObserver use.
var Default = NewRegistry()

// NewRegistry returns an empty Registry.
func NewRegistry() *Registry {
	return &Registry{pools: map[uint64]*entry{}, budgets: map[uint64]*budgetEntry{}}
}

// Register lists a pool on the default registry's page under name, read
// through stats (a pool's Stats method); an empty name means the pool's
// own (Stats.Name, from shoal.Config.Name). Call the returned function to
// remove it, after the pool is closed say. Two pools may share a name;
// both are listed.
func Register(name string, stats func() shoal.Stats) (unregister func()) {
	return Default.Register(name, stats)
}

// Register lists a pool on r's page; see the package function Register.
func (r *Registry) Register(name string, stats func() shoal.Stats) (unregister func()) {
	return r.add(name, stats, nil)
}

// add registers a pool and returns the function that removes it, which
// may be called more than once.
func (r *Registry) add(name string, stats func() shoal.Stats, obs *Observer) func() {
	return register(r, r.pools, func(seq uint64) *entry {
		return &entry{name: maskName(name), stats: stats, obs: obs, seq: seq}
	})
}

// register files the entry made for the registry's next number in m, and
// returns the function that takes it out again, which may be called more
// than once. Pools and budgets share the numbering, so that each list
// keeps registration order.
func register[E any](r *Registry, m map[uint64]E, newEntry func(seq uint64) E) func() {
	r.mu.Lock()
	r.next++
	seq := r.next
	m[seq] = newEntry(seq)
	r.mu.Unlock()
	return func() {
		r.mu.Lock()
		delete(m, seq)
		r.mu.Unlock()
	}
}

// entries returns the registered pools in registration order.
func (r *Registry) entries() []*entry {
	r.mu.Lock()
	out := make([]*entry, 0, len(r.pools))
	for _, e := range r.pools {
		out = append(out, e)
	}
	r.mu.Unlock()
	slices.SortFunc(out, func(a, b *entry) int { return cmp.Compare(a.seq, b.seq) })
	return out
}
