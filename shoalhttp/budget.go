package shoalhttp

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/permitmove"
)

// The cap across origins (Options.MaxConnsTotal) is a shoal.LocalBudget
// that every origin's pool joins. Two things are the Transport's own:
//
//   - An origin's first connection is dialled by its probe, before the
//     origin's pool exists (the pool's type depends on the protocol the
//     server chooses). The probe takes its permit as a member of its own,
//     firstConns, and the pool's first dial, which is handed the probe's
//     connection, is handed the probe's permit with it (originBudget),
//     moved to the pool's member, so every connection holds one permit
//     from its dial to its close and counts against its own origin's
//     share while it lives in the pool.
//   - A pool claims as its minimum the MinConns of Options, not the
//     HTTP/2 default of 2, so that many HTTP/2 origins fit under a cap
//     smaller than twice their number. The probe reserves that minimum
//     before it waits for a permit, so that an origin whose minimum
//     would not fit beside the others' fails at once.

// firstConns is the member of the Transport's budget that holds the
// permits of origins' first connections: from the probe's dial until the
// connection, handed to its pool, closes. It is joined while it holds any,
// so that an idle Transport leaves the budget's sampler nothing to do.
type firstConns struct {
	budget  *shoal.LocalBudget
	waiting atomic.Int32 // probes waiting for a permit: the demand

	mu      sync.Mutex
	n       int    // probes under way plus permits out
	leave   func() // while joined
	claimed int    // origins' minimums reserved (reserve)
}

func (f *firstConns) Demand() int   { return int(f.waiting.Load()) }
func (f *firstConns) SetShare(int)  {} // a probe waits in AcquireFor; it has nothing to resize
func (f *firstConns) MinConns() int { return 0 }
func (f *firstConns) Name() string  { return "first connections" }

func (f *firstConns) joined() bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.leave != nil
}

// add counts a probe or permit in (+1) or out (-1), joining the budget on
// the first and leaving it after the last.
func (f *firstConns) add(d int) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.n == 0 && d > 0 {
		leave, err := f.budget.Join(f)
		if err != nil {
			return err
		}
		f.leave = leave
	}
	f.n += d
	if f.n == 0 {
		f.leave()
		f.leave = nil
	}
	return nil
}

// reserve claims an origin's minimum, MinConns, against the cap before its
// probe waits for a permit: the budget would refuse the origin's pool
// once the probe had dialled, and while the others' minimums take the
// whole cap no probe is given a permit at all. unreserve gives it back.
func (f *firstConns) reserve(origin string, minConns, size int) error {
	if minConns <= 0 {
		return nil
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.claimed+minConns > size {
		return fmt.Errorf("shoalhttp: origin %s: its MinConns %d does not fit under MaxConnsTotal %d beside the %d other origins' (each origin claims MinConns); raise MaxConnsTotal or lower MinConns",
			origin, minConns, size, f.claimed/minConns)
	}
	f.claimed += minConns
	return nil
}

func (f *firstConns) unreserve(minConns int) {
	if minConns <= 0 {
		return
	}
	f.mu.Lock()
	f.claimed -= minConns
	f.mu.Unlock()
}

// acquire waits for a permit for a probe's dial, within ctx.
func (f *firstConns) acquire(ctx context.Context) (shoal.BudgetPermit, error) {
	f.waiting.Add(1)
	defer f.waiting.Add(-1)
	if err := f.add(1); err != nil {
		return nil, err
	}
	p, err := f.budget.AcquireFor(ctx, f)
	if err != nil {
		_ = f.add(-1)
		return nil, err
	}
	return &firstPermit{BudgetPermit: p, f: f}, nil
}

// firstPermit is a probe's permit; its release also counts it out of
// firstConns.
type firstPermit struct {
	shoal.BudgetPermit
	f    *firstConns
	done atomic.Bool
}

func (p *firstPermit) Release() {
	if p.done.Swap(true) {
		return
	}
	p.BudgetPermit.Release()
	_ = p.f.add(-1)
}

// handTo moves the permit to m, the member of the pool that adopts the
// probe's connection, and returns it as m's: from then on it counts
// against that origin's share, not firstConns'. Should the move fail
// (only if m has left), the permit stays firstConns' until its release.
func (p *firstPermit) handTo(m shoal.BudgetMember) shoal.BudgetPermit {
	if err := permitmove.Move(p.BudgetPermit, m); err != nil {
		return p
	}
	if !p.done.Swap(true) {
		_ = p.f.add(-1)
	}
	return p.BudgetPermit
}

// originBudget is the Budget of one origin's pool under MaxConnsTotal: the
// Transport's LocalBudget, joined with the pool's member as the origin
// names it, and the probe's permit handed to the pool's first dial.
type originBudget struct {
	first  *firstConns
	name   string
	min    int
	seed   atomic.Pointer[shoal.BudgetPermit] // the probe's permit, until a dial takes it
	member shoal.BudgetMember                 // set by Join, before any Acquire

	// reserved is min as the probe reserved it (firstConns.reserve),
	// until the pool leaves the budget or is never made.
	reserved atomic.Bool
}

// originMember is a pool's member as the Transport's budget sees it: named
// by its origin, claiming Options.MinConns.
type originMember struct {
	m    shoal.BudgetMember
	name string
	min  int
}

func (m originMember) Demand() int    { return m.m.Demand() }
func (m originMember) SetShare(n int) { m.m.SetShare(n) }
func (m originMember) MinConns() int  { return m.min }
func (m originMember) Name() string   { return m.name }

func (b *originBudget) Join(m shoal.BudgetMember) (func(), error) {
	b.member = originMember{m: m, name: b.name, min: b.min}
	leave, err := b.first.budget.Join(b.member)
	if err != nil {
		return nil, err
	}
	return func() { leave(); b.unreserve() }, nil
}

// unreserve gives back the minimum the probe reserved, once.
func (b *originBudget) unreserve() {
	if b.reserved.Swap(false) {
		b.first.unreserve(b.min)
	}
}

// Acquire hands the pool's first dial the probe's permit, moved to the
// pool's member, then asks the Transport's budget.
func (b *originBudget) Acquire(ctx context.Context) (shoal.BudgetPermit, error) {
	if p := b.seed.Swap(nil); p != nil {
		if fp, ok := (*p).(*firstPermit); ok {
			return fp.handTo(b.member), nil
		}
		return *p, nil
	}
	return b.first.budget.AcquireFor(ctx, b.member)
}

var _ shoal.BudgetAsker = (*originBudget)(nil)

// AskShare passes an origin's pool's ask for a division on to the
// Transport's budget (shoal.BudgetAsker).
func (b *originBudget) AskShare() { b.first.budget.AskShare() }

// Name is the Transport's budget's, what an acquire error calls the cap
// that held an origin's pool back (shoal.AcquireError.Budget).
func (b *originBudget) Name() string { return b.first.budget.Name() }

// Members is how many origins' pools share the cap (Stats.BudgetMembers).
func (b *originBudget) Members() int {
	n := b.first.budget.Members()
	if b.first.joined() {
		n--
	}
	return max(n, 1)
}

// dropSeed releases the probe's permit if no dial took it (the pool
// closed, or was never made).
func (b *originBudget) dropSeed() {
	if p := b.seed.Swap(nil); p != nil {
		(*p).Release()
	}
}

// Budget returns the budget of Options.MaxConnsTotal, which every origin's
// pool shares, for its Stats per origin; nil without a cap.
func (t *Transport) Budget() *shoal.LocalBudget {
	if t.first == nil {
		return nil
	}
	return t.first.budget
}
