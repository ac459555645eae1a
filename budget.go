package shoal

import (
	"context"
	"fmt"
	"sync/atomic"
)

// Budget is a limit on connections that a pool shares with other pools:
// in this process (LocalBudget), or in many processes (shoaletcd keeps one
// in etcd). A pool with a Budget (Config.Budget) asks it for a permit
// before every dial and gives the permit back once that connection is
// closed, so connections opened under one budget never outnumber its
// permits. A connection taken out of its pool by Lease.Hijack gives its
// permit back as it leaves, as it does its place in MaxConns: from then on
// it is the caller's, and uncounted. The budget also sets how many
// connections the pool may hold (its share), and the pool never opens more
// than the smaller of its share and its own MaxConns.
//
// The pool calls Acquire from its dial goroutines only, never on the
// acquire path, so a budget may take a network round trip per permit.
type Budget interface {
	// Join connects a pool to the budget. New calls it once, after the
	// pool is whole and before it dials anything; the budget calls
	// member.SetShare whenever the pool's share changes (before Join
	// returns, with the share the pool starts on) and reads
	// member.Demand as often as it likes. The pool calls leave once, when
	// it is closed and every one of its connections is closed. A budget
	// that cannot take the pool (one that serves a single pool, say)
	// returns an error, before it calls SetShare, and New returns it.
	Join(member BudgetMember) (leave func(), err error)

	// Acquire returns a permit to open one connection, waiting until the
	// budget has one for this pool or ctx ends (the pool's ctx ends when
	// the pool closes). An error other than ctx's counts as a failed dial.
	// ctx names the pool asking (BudgetMemberFromContext), so that a
	// budget serving several pools knows whose share the permit counts in.
	Acquire(ctx context.Context) (BudgetPermit, error)
}

// BudgetPermit is a budget's leave to keep one connection open. The pool
// calls Release exactly once: after the connection it was acquired for is
// closed, or at once when the dial fails or the connection is hijacked
// (Lease.Hijack). A permit that also has an
// OnRevoke(revoke func()) method is handed, as its connection opens, a
// function that closes that connection as soon as nobody holds it
// (ReasonRevoked): a budget's way to take one particular permit back.
type BudgetPermit interface {
	// Slot is the permit's number, in [0, the budget's size). No two
	// permits out at once share a slot, so a lock per slot held at the
	// server (shoalpgx's fence) catches a permit counted twice. A Dial
	// finds its permit with PermitFromContext.
	Slot() int
	// Release gives the permit back to the budget.
	Release()
}

// BudgetMember is the side of a pool that its Budget sees. A pool's member
// also has MinConns() int (Config.MinConns, at most the pool's MaxConns
// now: the share it is granted first) and Name() string (Config.Name),
// which a budget serving several pools reads through interfaces of its
// own. Members are comparable: a budget
// may key its pools by them.
type BudgetMember interface {
	// Demand is how many connections the pool would use now: those in use
	// plus the callers waiting (in a multiplexed pool, the streams in use
	// and waited for, in connections of BusyStreams, MaxStreams unless
	// set), at most MaxConns.
	Demand() int
	// SetShare sets how many connections the pool may hold. Growing lets
	// waiters be served by new dials at once; shrinking closes idle
	// connections above the share at once and leased ones as they are
	// released, and never fails an acquire (callers wait, within their
	// context). A share below 0 counts as 0.
	SetShare(n int)
}

// permitKey is the context key under which a dial finds its permit.
type permitKey struct{}

// PermitFromContext returns the budget permit of the connection being
// dialled, from the ctx the pool passes to Config.Dial and Hooks.OnConnect,
// or nil when the pool has no Budget. shoalpgx uses its Slot to fence the
// connection at the server.
func PermitFromContext(ctx context.Context) BudgetPermit {
	p, _ := ctx.Value(permitKey{}).(BudgetPermit)
	return p
}

// budgetMember is the pool as its Budget sees it. It is a type of its own
// so that SetShare is not a method of Pool: only the budget sets shares.
type budgetMember[T any] struct{ p *Pool[T] }

func (m budgetMember[T]) Demand() int    { return m.p.demand() }
func (m budgetMember[T]) SetShare(n int) { m.p.setShare(n) }

// Load is Demand split in two for a LocalBudget: the connections serving
// leases now, and those plus the ones callers wait for.
func (m budgetMember[T]) Load() (busy, demand int) { return m.p.load() }

// MinConns and Name tell a budget that serves several pools (LocalBudget,
// shoaletcd's) the pool's minimum share and what to call it. The minimum
// is kept only up to MaxConns, as the pool keeps it: a pool that
// SetMaxConns shrank below its MinConns cannot use the rest, and a budget
// that reserved it would keep it from the other pools.
func (m budgetMember[T]) MinConns() int {
	return min(m.p.cfg.MinConns, int(m.p.cap.maxConns.Load()))
}
func (m budgetMember[T]) Name() string { return m.p.cfg.Name }

// BudgetAsker is a Budget that divides its connections at once when asked,
// rather than at its next sample (LocalBudget is one). A pool asks when its
// share alone holds back a dial it wants: a caller waits, or a multiplexed
// pool would dial beside its busy connections. A Budget that passes a
// pool's requests on to another (ContextWithBudgetMember) should pass the
// ask on too, or the pool's connections move at the other's next sample.
type BudgetAsker interface {
	// AskShare asks for a division soon. It never blocks, and the budget
	// may let it pass: a LocalBudget does unless its last division met
	// every demand and left a pool holding idle connections.
	AskShare()
}

// budgetLink is the pool's tie to its Budget: nil fields without one.
type budgetLink struct {
	budget Budget
	leave  func() // from Budget.Join; called once the pool is drained
	// permitWaits counts the dials waiting in Budget.Acquire, so that an
	// acquire error tells them from dials waiting on the server.
	permitWaits atomic.Int32
}

// joinBudget connects the pool to b; New calls it once the pool is whole.
// Until the budget sets a share, permits alone bound the pool.
func (p *Pool[T]) joinBudget(b Budget) error {
	p.link.budget = b
	leave, err := b.Join(budgetMember[T]{p})
	if err != nil {
		return &ConfigError{Field: "Budget", Reason: "refused the pool: " + err.Error(), Err: err}
	}
	p.link.leave = leave
	return nil
}

// demand is Stats.Demand, read without the rest of Stats.
func (p *Pool[T]) demand() int {
	_, d := p.load()
	return d
}

// load returns the connections serving leases now and Stats.Demand, from
// one reading of the engine.
func (p *Pool[T]) load() (busy, demand int) {
	waiting := int(p.hot.waiters.Load())
	leases, _, _ := p.eng.count()
	return p.demandFrom(leases, 0), p.demandFrom(leases, waiting)
}

// demandFrom turns leases held and callers waiting into connections wanted:
// one each in exclusive mode, BusyStreams (MaxStreams unless set) each in
// multiplexed mode.
func (p *Pool[T]) demandFrom(leases, waiting int) int {
	n := (leases + waiting + p.feat.busyStreams - 1) / p.feat.busyStreams
	return min(n, int(p.cap.maxConns.Load()))
}

// acquirePermit asks the Budget for leave to dial one connection and returns
// the context the dial runs under, which carries the permit.
func (p *Pool[T]) acquirePermit(ctx context.Context) (context.Context, BudgetPermit, error) {
	p.link.permitWaits.Add(1)
	defer p.link.permitWaits.Add(-1)
	permit, err := p.link.budget.Acquire(ContextWithBudgetMember(ctx, budgetMember[T]{p}))
	if err != nil {
		return ctx, nil, fmt.Errorf("budget: %w", err)
	}
	return context.WithValue(ctx, permitKey{}, permit), permit, nil
}

// revocablePermit is a permit its budget may take back: the budget calls
// the function the pool gave OnRevoke, and the pool closes that very
// connection as soon as nobody holds it (ReasonRevoked). shoaletcd does so
// for a connection that held a slot through an etcd outage and found the
// slot's key taken on its return, since closing any other connection
// would leave the one whose slot is in dispute open.
type revocablePermit interface{ OnRevoke(revoke func()) }

// budgetHeldBack fills in e's Budget, Share and PermitWaits when the
// pool's Budget holds it back: its share is below MaxConns, or a dial
// waits for a permit. Without them, "for one of 0 connections" or
// "1 dialing" on a pool of MaxConns 4 reads as a server slow to connect.
func (p *Pool[T]) budgetHeldBack(e *AcquireError) {
	if p.link.budget == nil {
		return
	}
	share, waits := int(p.cap.share.Load()), int(p.link.permitWaits.Load())
	if share >= int(p.cap.maxConns.Load()) && waits == 0 {
		return
	}
	e.Budget, e.Share, e.PermitWaits = budgetName(p.link.budget), share, waits
}

// budgetName is what an error calls b: its Name (LocalBudget's,
// shoaletcd's), else its type.
func budgetName(b Budget) string {
	if n, ok := b.(interface{ Name() string }); ok && n.Name() != "" {
		return n.Name()
	}
	return fmt.Sprintf("%T", b)
}
