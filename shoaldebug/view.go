package shoaldebug

import (
	"time"

	"github.com/shoalpool/shoal"
)

// Page is what the page shows, and what it answers with in JSON.
type Page struct {
	At    time.Time  `json:"at"`
	Pools []PoolView `json:"pools"`
}

// PoolView is one pool on the page.
type PoolView struct {
	Name  string      `json:"name"`
	Stats shoal.Stats `json:"stats"`
	// Observed reports whether the pool is watched by an Observer; without
	// one, Waits, LastDialError and Leaks are empty.
	Observed      bool       `json:"observed"`
	Waits         []Bucket   `json:"waits,omitempty"`
	LastDialError *DialError `json:"last_dial_error,omitempty"`
	Leaks         []Leak     `json:"leaks,omitempty"` // newest first
}

// Budgeted reports whether the pool shares a Budget, when the page shows
// its share, demand and members.
func (v PoolView) Budgeted() bool { return v.Stats.BudgetMembers > 0 }

// MaxWaitCount is the largest bucket's count, which the page's bars are
// drawn against.
func (v PoolView) MaxWaitCount() int64 {
	var m int64
	for _, b := range v.Waits {
		m = max(m, b.Count)
	}
	return m
}

// Snapshot reads every pool registered with r now.
func (r *Registry) Snapshot() Page {
	p := Page{At: time.Now(), Pools: []PoolView{}}
	for _, e := range r.entries() {
		v := PoolView{Name: e.name, Stats: e.stats()}
		if e.obs != nil {
			v.Observed = true
			v.Waits, v.LastDialError, v.Leaks = e.obs.recorded()
		}
		p.Pools = append(p.Pools, v)
	}
	return p
}
