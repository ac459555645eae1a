package shoalpgx

import (
	"testing"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// A pipelined pool under a Budget of the user's reports the budget's
// figures as one pool, as it does without pipelining: its share (at most
// the budget's size), demand and the budget's members, in Stat and to its
// Observer, which shoalprom exports as shoal_pool_budget_* and the
// ShoalBudgetStarved alert reads.
func TestPipelineStatShowsTheUsersBudget(t *testing.T) {
	const size = 3
	b, err := shoal.NewBudget(size, shoal.BudgetName("small"))
	if err != nil {
		t.Fatal(err)
	}
	obs := &attachedObserver{}
	p := newPipelinedPool(t, 4, 4, func(c *Config) {
		c.Budget = b
		c.Observer = obs
	})
	ctx := pgtest.Ctx(t)
	var n int
	if err := p.QueryRow(ctx, "select 1").Scan(&n); err != nil {
		t.Fatal(err)
	}
	members := b.Members()
	for what, s := range map[string]shoal.Stats{"Stat": p.Stat().Shoal(), "the Observer's Stats": obs.read(t)} {
		if s.BudgetMembers != members || s.Share < 1 || s.Share > size {
			t.Errorf("%s: budget share %d, members %d; want a share of 1 to %d (the budget's size) and the budget's %d members",
				what, s.Share, s.BudgetMembers, size, members)
		}
	}
}

// poolsBudget is a LocalBudget whose members stand for processes, as
// shoaletcd's do: it counts the pools sharing it with Pools.
type poolsBudget struct {
	*shoal.LocalBudget
	pools int
}

func (b poolsBudget) Pools() int { return b.pools }

// Under a budget whose members are processes (shoaletcd's), a pipelined
// pool counts the pools sharing it (Pools), as the core pool does without
// pipelining, not the members.
func TestPipelineStatCountsThePoolsOfABudgetOfProcesses(t *testing.T) {
	local, err := shoal.NewBudget(3, shoal.BudgetName("etcd-like"))
	if err != nil {
		t.Fatal(err)
	}
	b := poolsBudget{LocalBudget: local, pools: 7}
	p := newPipelinedPool(t, 4, 4, func(c *Config) { c.Budget = b })
	plain := newTestPool(t, func(c *Config) { c.Budget = b })
	for what, s := range map[string]shoal.Stats{"pipelined": p.Stat().Shoal(), "plain": plain.Stat().Shoal()} {
		if s.BudgetMembers != 7 {
			t.Errorf("%s pool: BudgetMembers %d, want the budget's 7 pools (its members: %d)", what, s.BudgetMembers, local.Members())
		}
	}
}
