package poolmetrics

import (
	"slices"
	"sync"
	"sync/atomic"

	"github.com/shoalpool/shoal"
)

// Sources are the Stats functions attached to one pool name: usually one
// pool's, and several while pools that share a name overlap (a shoalhttp
// origin whose pool was replaced while the old one drains).
type Sources struct {
	mu   sync.Mutex
	list []*source
	// retiredMisses is the last BargeMisses seen of each source detached
	// since: a counter must not fall when one of two pools sharing a name
	// goes away.
	retiredMisses int64
}

// source is one attached Stats function and the last BargeMisses it gave.
type source struct {
	stats  func() shoal.Stats
	misses atomic.Int64
}

// note records n as the source's count, unless a read that overtook this
// one recorded more.
func (s *source) note(n int64) {
	for old := s.misses.Load(); n > old && !s.misses.CompareAndSwap(old, n); old = s.misses.Load() {
	}
}

// Attach adds stats and returns the function that removes it again.
func (s *Sources) Attach(stats func() shoal.Stats) (detach func()) {
	if stats == nil {
		return func() {}
	}
	entry := &source{stats: stats}
	s.mu.Lock()
	s.list = append(s.list, entry)
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			// One last read, so that misses since the last scrape are kept:
			// a pool detaches once it has drained, and Stats takes none of
			// the locks held where it drains.
			entry.note(stats().BargeMisses)
			s.mu.Lock()
			defer s.mu.Unlock()
			s.list = slices.DeleteFunc(s.list, func(e *source) bool { return e == entry })
			s.retiredMisses += entry.misses.Load()
		})
	}
}

// Gauges calls every attached function, outside the lock (each walks its
// pool), and adds up their gauges. ok is false when none is attached.
//
// total.BargeMisses, a counter, is set whether or not any is attached: the
// attached pools' counts plus the last counts of those detached since, so
// that it never falls. A pool's last count is read as it detaches.
func (s *Sources) Gauges() (total shoal.Stats, ok bool) {
	s.mu.Lock()
	list := slices.Clone(s.list)
	s.mu.Unlock()
	for _, src := range list {
		st := src.stats()
		src.note(st.BargeMisses)
		total.MaxConns += st.MaxConns
		total.MinIdle += st.MinIdle
		total.MinConns += st.MinConns
		total.TotalConns += st.TotalConns
		total.IdleConns += st.IdleConns
		total.InUseConns += st.InUseConns
		total.Leases += st.Leases
		total.Waiting += st.Waiting
		total.Dialing += st.Dialing
		total.Share += st.Share
		total.Demand += st.Demand
		// Pools of one name share a budget or not; its members are
		// counted by the budget, not summed.
		total.BudgetMembers = max(total.BudgetMembers, st.BudgetMembers)
	}
	s.mu.Lock()
	total.BargeMisses = s.retiredMisses
	for _, src := range s.list {
		total.BargeMisses += src.misses.Load()
	}
	s.mu.Unlock()
	return total, len(list) > 0
}
