package shoal

// BudgetStats is a snapshot of a LocalBudget: its size, the permits out,
// and each pool's part, for metrics and the live page.
type BudgetStats struct {
	Name    string              // the budget's name (BudgetName)
	Size    int                 // connections the pools may hold between them
	InUse   int                 // permits out: connections open or being dialled or closed
	Members []BudgetMemberStats // the pools joined, in the order they joined
}

// BudgetMemberStats is one pool's part of a LocalBudget.
type BudgetMemberStats struct {
	Name   string // the pool's Config.Name, or "pool-N" (the Nth to join) without one
	Min    int    // its minimum share: its MinConns, at most its MaxConns now
	Demand int    // its demand as the share is computed from it: the highest of the last IdleTime
	Share  int    // connections it may hold now
	Held   int    // permits it holds: its connections, open or being dialled or closed
}

// Members returns how many pools are joined now; a pool's
// Stats.BudgetMembers reads it.
func (b *LocalBudget) Members() int {
	b.mu.Lock()
	defer b.mu.Unlock()
	return len(b.order)
}

// Stats returns a snapshot of the budget and of each pool's part.
func (b *LocalBudget) Stats() BudgetStats {
	b.mu.Lock()
	defer b.mu.Unlock()
	s := BudgetStats{Name: b.name, Size: b.size, InUse: b.out, Members: make([]BudgetMemberStats, len(b.order))}
	for i, lm := range b.order {
		s.Members[i] = BudgetMemberStats{Name: lm.name, Min: lm.part.Min, Demand: lm.part.Demand, Share: lm.part.Share, Held: lm.held}
	}
	return s
}
