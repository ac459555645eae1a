// Package poolmetrics holds what shoalprom and shoalotel share: the Stats
// sources attached to one pool name, and the pool name of a URL.
package poolmetrics

import (
	"slices"
	"sync"

	"github.com/shoalpool/shoal"
)

// Sources are the Stats functions attached to one pool name: usually one
// pool's, and several while pools that share a name overlap (a shoalhttp
// origin whose pool was replaced while the old one drains).
type Sources struct {
	mu   sync.Mutex
	list []*func() shoal.Stats // by identity, so that detach removes its own
}

// Attach adds stats and returns the function that removes it again.
func (s *Sources) Attach(stats func() shoal.Stats) (detach func()) {
	if stats == nil {
		return func() {}
	}
	entry := &stats
	s.mu.Lock()
	s.list = append(s.list, entry)
	s.mu.Unlock()
	var once sync.Once
	return func() {
		once.Do(func() {
			s.mu.Lock()
			defer s.mu.Unlock()
			s.list = slices.DeleteFunc(s.list, func(e *func() shoal.Stats) bool { return e == entry })
		})
	}
}

// Gauges calls every attached function, outside the lock (each walks its
// pool), and adds up their gauges. ok is false when none is attached.
func (s *Sources) Gauges() (total shoal.Stats, ok bool) {
	s.mu.Lock()
	list := slices.Clone(s.list)
	s.mu.Unlock()
	for _, stats := range list {
		st := (*stats)()
		total.MaxConns += st.MaxConns
		total.MinIdle += st.MinIdle
		total.MinConns += st.MinConns
		total.TotalConns += st.TotalConns
		total.IdleConns += st.IdleConns
		total.InUseConns += st.InUseConns
		total.Leases += st.Leases
		total.Waiting += st.Waiting
		total.Dialing += st.Dialing
	}
	return total, len(list) > 0
}
