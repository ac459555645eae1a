package shoaldebug

import (
	"cmp"
	"slices"

	"github.com/shoalpool/shoal"
)

// budgetEntry is one registered budget.
type budgetEntry struct {
	seq   uint64
	name  string // masked
	stats func() shoal.BudgetStats
}

// BudgetView is one budget on the page: its size, the permits out, and
// each pool's part (its minimum, the demand its share is computed from,
// its share and the permits it holds).
type BudgetView struct {
	Name  string      `json:"name"`  // the name it was registered under, masked
	Stats BudgetStats `json:"stats"` // its figures when the page was read
}

// BudgetStats is shoal.BudgetStats as the page shows it, with the JSON
// keys in the page's style.
type BudgetStats struct {
	Name    string              `json:"name"`    // the budget's own name, masked
	Size    int                 `json:"size"`    // connections the pools may hold between them
	InUse   int                 `json:"in_use"`  // permits out
	Members []BudgetMemberStats `json:"members"` // the pools joined, in the order they joined
}

// BudgetMemberStats is one pool's part of a budget (shoal.BudgetMemberStats).
type BudgetMemberStats struct {
	Name   string `json:"name"`   // the pool's name, masked
	Min    int    `json:"min"`    // its minimum share
	Demand int    `json:"demand"` // the demand its share is computed from
	Share  int    `json:"share"`  // connections it may hold now
	Held   int    `json:"held"`   // permits it holds
}

// budgetStatsOf copies a budget's figures, its names masked: a pool's
// name may be a connection string.
func budgetStatsOf(s shoal.BudgetStats) BudgetStats {
	out := BudgetStats{Name: maskName(s.Name), Size: s.Size, InUse: s.InUse,
		Members: make([]BudgetMemberStats, 0, len(s.Members))}
	for _, m := range s.Members {
		out.Members = append(out.Members, BudgetMemberStats{
			Name: maskName(m.Name), Min: m.Min, Demand: m.Demand, Share: m.Share, Held: m.Held,
		})
	}
	return out
}

// RegisterBudget lists a budget on the default registry's page under
// name, read through stats (a shoal.LocalBudget's Stats method; a
// shoalhttp Transport's Budget().Stats), with a line per pool that shares
// it: the pools of a shoal.Group, the origins of a Transport. Call the
// returned function to remove it.
func RegisterBudget(name string, stats func() shoal.BudgetStats) (unregister func()) {
	return Default.RegisterBudget(name, stats)
}

// RegisterBudget lists a budget on r's page; see the package function
// RegisterBudget.
func (r *Registry) RegisterBudget(name string, stats func() shoal.BudgetStats) (unregister func()) {
	return register(r, r.budgets, func(seq uint64) *budgetEntry {
		return &budgetEntry{name: maskName(name), stats: stats, seq: seq}
	})
}

// budgetViews reads every registered budget, in registration order. Pool
// names are masked as the pools' own are: a name may be a connection
// string.
func (r *Registry) budgetViews() []BudgetView {
	r.mu.Lock()
	es := make([]*budgetEntry, 0, len(r.budgets))
	for _, e := range r.budgets {
		es = append(es, e)
	}
	r.mu.Unlock()
	slices.SortFunc(es, func(a, b *budgetEntry) int { return cmp.Compare(a.seq, b.seq) })
	var out []BudgetView
	for _, e := range es {
		out = append(out, BudgetView{Name: e.name, Stats: budgetStatsOf(e.stats())})
	}
	return out
}
