package shoaldebug

import "time"

// Page is what the page shows, and what it answers with in JSON.
type Page struct {
	At    time.Time  `json:"at"`    // when it was read
	Pools []PoolView `json:"pools"` // every registered pool, in the order registered
	// Budgets are the budgets registered with RegisterBudget, each with
	// its pools' parts.
	Budgets []BudgetView `json:"budgets,omitempty"`
}

// PoolView is one pool on the page. Name is the name it was registered
// under, or the pool's own (Stats.Name) when that was empty, its passwords
// masked.
type PoolView struct {
	Name  string `json:"name"`  // the name it is listed under, as above
	Stats Stats  `json:"stats"` // the pool's Stats when the page was read
	// Observed reports whether the pool is watched by an Observer; without
	// one, Waits, LastDialError and Leaks are empty.
	Observed      bool       `json:"observed"`
	Waits         []Bucket   `json:"waits,omitempty"`           // the acquire-wait histogram
	LastDialError *DialError `json:"last_dial_error,omitempty"` // nil when no dial has failed
	Leaks         []Leak     `json:"leaks,omitempty"`           // newest first
	// Holders are the leases held now, the longest held first (at most
	// 32): how long each has been held and, with Config.LeakThreshold or
	// tracing (an Observer that is a shoal.WaitTracer), the function that
	// took it.
	Holders []Holder `json:"holders,omitempty"`
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
		v := PoolView{Name: e.name, Stats: statsOf(e.stats())}
		// The page shows names masked, the pool's own too.
		v.Stats.Name = maskName(v.Stats.Name)
		if v.Name == "" {
			v.Name = v.Stats.Name
		}
		if e.obs != nil {
			v.Observed = true
			v.Waits, v.LastDialError, v.Leaks = e.obs.recorded()
			v.Holders = e.obs.heldNow()
		}
		p.Pools = append(p.Pools, v)
	}
	p.Budgets = r.budgetViews()
	return p
}
