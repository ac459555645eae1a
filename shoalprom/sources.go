package shoalprom

import (
	"slices"
	"sync"

	"github.com/shoalpool/shoal"
)

// sources are the Stats functions attached to one PoolMetrics: usually one
// pool's, and several while pools that share a name overlap (a shoalhttp
// origin whose pool was replaced while the old one drains).
type sources struct {
	mu   sync.Mutex
	list []*func() shoal.Stats // by identity, so that detach removes its own
}

// attach adds stats and returns the function that removes it again.
func (s *sources) attach(stats func() shoal.Stats) (detach func()) {
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

// gauges calls every attached function, outside the lock (each walks its
// pool), and adds up their gauges. ok is false when none is attached.
func (s *sources) gauges() (total shoal.Stats, ok bool) {
	s.mu.Lock()
	list := slices.Clone(s.list)
	s.mu.Unlock()
	for _, stats := range list {
		st := (*stats)()
		total.MaxConns += st.MaxConns
		total.MinIdle += st.MinIdle
		total.TotalConns += st.TotalConns
		total.IdleConns += st.IdleConns
		total.InUseConns += st.InUseConns
		total.Leases += st.Leases
		total.Waiting += st.Waiting
		total.Dialing += st.Dialing
	}
	return total, len(list) > 0
}
