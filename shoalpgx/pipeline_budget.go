package shoalpgx

import (
	"context"
	"errors"
	"math"
	"sync"

	"github.com/shoalpool/shoal"
)

// A user's Budget with pipelining. The pool's two core pools, whole and
// shared, join the user's Budget each as a member of its own (named as the
// pools are: Name, and Name + "/pipelined"), and also the in-process budget
// of MaxConns that divides MaxConns between them (newDivision). Each core
// pool's share is the smaller of its two shares, and a dial's permit is
// one of each, the division's taken first so that a kind over its part of
// MaxConns does not hold a permit of the user's budget while it waits. The
// pool then never holds more than MaxConns, and never more than the user's
// budget grants its two members together; the fence (fence.go) locks the
// user's budget's slot.

// twoBudgets is the Budget each core pool of a pipelined pool joins when
// the config has a Budget: the division and the user's together.
type twoBudgets struct {
	division *shoal.LocalBudget
	user     shoal.Budget

	mu      sync.Mutex
	members map[shoal.BudgetMember]*twoShares
}

// twoShares is one core pool in both budgets: it joins each under a
// member of its own, which passes the pool's demand on and records the
// budget's share, and tells the pool the smaller.
type twoShares struct {
	pool     shoal.BudgetMember
	mu       sync.Mutex
	division int
	user     int
	asDiv    *shareSide
	asUser   *shareSide
}

// shareSide is a core pool as one of the two budgets sees it.
type shareSide struct {
	s    *twoShares
	user bool // the user's budget's side; the division's otherwise
}

// Demand is the pool's.
func (m *shareSide) Demand() int { return m.s.pool.Demand() }

// SetShare records the budget's share and tells the pool the smaller.
func (m *shareSide) SetShare(n int) {
	s := m.s
	s.mu.Lock()
	defer s.mu.Unlock()
	if m.user {
		s.user = n
	} else {
		s.division = n
	}
	s.pool.SetShare(min(s.user, s.division))
}

// MinConns is the pool's, for a budget that grants it first.
func (m *shareSide) MinConns() int {
	if mc, ok := m.s.pool.(interface{ MinConns() int }); ok {
		return mc.MinConns()
	}
	return 0
}

// Name is the pool's, for a budget's stats.
func (m *shareSide) Name() string {
	if n, ok := m.s.pool.(interface{ Name() string }); ok {
		return n.Name()
	}
	return ""
}

// Join joins the core pool m to both budgets.
func (b *twoBudgets) Join(m shoal.BudgetMember) (func(), error) {
	// Until the user's budget sets a share, the division's stands.
	s := &twoShares{pool: m, user: math.MaxInt}
	s.asDiv, s.asUser = &shareSide{s: s}, &shareSide{s: s, user: true}
	leaveDiv, err := b.division.Join(s.asDiv)
	if err != nil {
		return nil, err
	}
	leaveUser, err := b.user.Join(s.asUser)
	if err != nil {
		leaveDiv()
		return nil, err
	}
	b.mu.Lock()
	b.members[m] = s
	b.mu.Unlock()
	return func() {
		b.mu.Lock()
		delete(b.members, m)
		b.mu.Unlock()
		leaveUser()
		leaveDiv()
	}, nil
}

// errNoPool is Acquire's error for a ctx that names no pool joined.
var errNoPool = errors.New("shoalpgx: a pipelined pool's budget was asked for a permit by no pool of its own")

// Acquire returns a permit of the division and one of the user's budget,
// for the core pool ctx names.
func (b *twoBudgets) Acquire(ctx context.Context) (shoal.BudgetPermit, error) {
	b.mu.Lock()
	s := b.members[shoal.BudgetMemberFromContext(ctx)]
	b.mu.Unlock()
	if s == nil {
		return nil, errNoPool
	}
	div, err := b.division.AcquireFor(ctx, s.asDiv)
	if err != nil {
		return nil, err
	}
	user, err := b.user.Acquire(shoal.ContextWithBudgetMember(ctx, s.asUser))
	if err != nil {
		div.Release()
		return nil, err
	}
	return &twoPermits{div: div, user: user}, nil
}

var _ shoal.BudgetAsker = (*twoBudgets)(nil)

// Name is what an acquire error calls the budget that held a pool back
// (shoal.AcquireError.Budget): the user's budget, which the user named,
// or else the division of MaxConns between the two kinds.
func (b *twoBudgets) Name() string {
	if n, ok := b.user.(interface{ Name() string }); ok && n.Name() != "" {
		return n.Name()
	}
	return b.division.Name()
}

// Members is how many pools share the user's budget, as it counts them
// (a pipelined pool's two kinds as two), or 1 when it cannot count them:
// what Stats.BudgetMembers reports without pipelining, where the core
// pool's budget is the user's (its Pools, for shoaletcd's, whose members
// are processes).
func (b *twoBudgets) Members() int {
	switch m := b.user.(type) {
	case interface{ Pools() int }:
		return max(m.Pools(), 1)
	case interface{ Members() int }:
		return max(m.Members(), 1)
	}
	return 1
}

// AskShare passes a core pool's ask for a division on to both budgets,
// where they take one (shoal.BudgetAsker).
func (b *twoBudgets) AskShare() {
	b.division.AskShare()
	if a, ok := b.user.(shoal.BudgetAsker); ok {
		a.AskShare()
	}
}

// twoPermits is a permit of each budget. Its slot is the user's budget's,
// the one the fence locks; what the user's permit does beside (a revoke,
// a refused slot) it passes on.
type twoPermits struct {
	div, user shoal.BudgetPermit
}

// Slot is the user's budget's slot.
func (p *twoPermits) Slot() int { return p.user.Slot() }

// Release gives both permits back.
func (p *twoPermits) Release() {
	p.user.Release()
	p.div.Release()
}

// OnRevoke hands revoke to the user's permit, when its budget takes
// permits back.
func (p *twoPermits) OnRevoke(revoke func()) {
	if r, ok := p.user.(interface{ OnRevoke(func()) }); ok {
		r.OnRevoke(revoke)
	}
}

// Fenced tells the user's permit that the server refused its slot.
func (p *twoPermits) Fenced() { refuseSlot(p.user) }

// Suspect is the user's permit's: whether its slot may still be held at the
// server by a process that lost its lease, which makes the look before the
// dial wait for a connection to look through (slotLockedElsewhere).
func (p *twoPermits) Suspect() bool {
	s, ok := p.user.(suspectPermit)
	return ok && s.Suspect()
}
