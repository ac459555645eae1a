package shoal

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal/internal/fairshare"
	"github.com/shoalpool/shoal/internal/permitmove"
)

// LocalBudget is a Budget for the pools of one process: any number of
// pools join it (Config.Budget), and between them they never hold more
// than its Size connections. It is the in-process counterpart of
// shoaletcd's budget, and shares out the same way:
//
//   - Each pool is granted its minimum (Config.MinConns, at most its
//     MaxConns now: a pool that SetMaxConns shrank below it leaves the
//     rest to the others) first; New refuses a pool whose minimum would
//     bring the minimums above Size, counting a shrunk pool's whole
//     MinConns, which it takes back as it grows.
//   - The rest is divided max-min fairly by demand (Stats.Demand: leases
//     held plus callers waiting): no pool gets more than another unless
//     the other has all it asks for. What is left once every demand is
//     met keeps first the connections each pool holds (a pool whose
//     demand fell keeps its idle connections while no other pool asks
//     for them, rather than close them and dial again at its next
//     burst), and is spread after that, so an idle pool holds headroom
//     that the next pool to need it takes at once. The connections that
//     do not divide evenly go round the pools, to the next ones every
//     IdleTime (at least a second), so that when more pools want
//     connections than there are, none waits for ever.
//   - A pool's demand counts as the highest it was over the last
//     IdleTime: a share grows as soon as demand rises and shrinks only
//     once demand has stayed low for IdleTime, so shares do not follow
//     every dip between two bursts.
//   - While a pool waits for connections its share does not cover, the
//     shares move, only as far as the pools that wait need, toward the
//     division by need: the connections each pool keeps busy, averaged
//     over IdleTime (not the callers waiting, which gather where
//     connections are short). A pool that waits takes its peers' idle
//     connections above their need at once; connections in use only once
//     it has waited an eighth of IdleTime (at least 50ms), since a
//     moved connection costs a close and a dial; and a pool left with
//     none gets one then even when more pools want one than there are.
//
// A pool whose share shrinks closes idle connections above it at once and
// leased ones as they are released; its permits come back when those
// connections' Close returns, and the pools that grew dial into them. So a
// pool at its share whose peers hold idle connections gets them, and the
// permits out never exceed Size at any moment. Each permit has a slot
// number in [0, Size), unique among the permits out.
//
// The budget samples its pools' demand every 50ms on one goroutine, which
// runs while at least one pool is joined, dividing only when something a
// division reads has changed or a pool waits, and divides at once, at most
// every 5ms, when a pool held back by its share asks (a caller waits, or
// a multiplexed pool would dial beside its busy connections) while the
// last division met every demand (AskShare). Its methods are safe for
// concurrent use.
type LocalBudget struct {
	name string
	size int
	idle time.Duration
	kick chan struct{} // wakes the sampler: a pool joined or left
	ask  chan struct{} // asks the sampler for a division now: a pool wants beyond its share
	// spare is set when the last division met every demand and found a
	// pool holding more connections than it used, kept for it from what
	// was left: only then can an ask (AskShare) move one. Under
	// contention the shares move toward need at the regular samples, as
	// sparingly as Rebalance allows, and asks would only hurry that.
	spare atomic.Bool

	// pushMu orders SetShare calls, which are made without mu held so a
	// pool's SetShare may take its own locks. It is taken before mu.
	pushMu sync.Mutex

	mu      sync.Mutex
	members map[BudgetMember]*localMember
	order   []*localMember // in join order
	joined  int            // pools ever joined: their default names
	sumMin  int
	out     int   // permits out
	free    []int // free slot numbers, the lowest last
	running bool  // the sampler goroutine runs
	changed chan struct{}
	// div divides among the pools, skipping a division whose inputs are
	// the last one's: a sample of idle pools then costs no division.
	div   fairshare.Divider
	parts []*fairshare.Pool // recomputeLocked's list, kept between divisions
}

// localMember is one pool in a LocalBudget.
type localMember struct {
	m      BudgetMember
	name   string
	part   fairshare.Pool // its demand, need and share
	pushed int            // what SetShare was told last; -1 before the first time
	held   int            // permits out
	left   bool
	// reserved is the minimum counted in sumMin, from Join: part.Min
	// follows the pool's MinConns below it (SetMaxConns), never above, so
	// that growing back never brings the minimums above Size.
	reserved int
}

// localSampleEvery is how often a LocalBudget samples its pools' demand:
// shoaletcd's tick, so the two follow demand alike.
const localSampleEvery = 50 * time.Millisecond

// localKickGap is the least time between a division and one a pool asks
// for (AskShare): a pool held to its share asks at every acquire, and
// would otherwise keep the sampler running flat out.
const localKickGap = 5 * time.Millisecond

var _ BudgetAsker = (*LocalBudget)(nil)

// defaultBudgetIdleTime is a LocalBudget's IdleTime unless BudgetIdleTime
// says otherwise; shoaletcd's default too.
const defaultBudgetIdleTime = 2 * time.Second

// BudgetOption configures a LocalBudget in NewBudget.
type BudgetOption func(*LocalBudget) error

// BudgetName names the budget in its Stats and on the live page; default
// "budget".
func BudgetName(name string) BudgetOption {
	return func(b *LocalBudget) error {
		if name == "" {
			return errors.New("shoal: BudgetName is empty")
		}
		b.name = name
		return nil
	}
}

// BudgetIdleTime sets how long a pool's demand must stay below a level
// before the share above it is given back, as shoaletcd's
// Options.IdleTime does: 0 means the default, 2s; a negative value means
// no wait, so that shares follow demand down at every sample.
func BudgetIdleTime(d time.Duration) BudgetOption {
	return func(b *LocalBudget) error {
		switch {
		case d == 0:
			b.idle = defaultBudgetIdleTime
		case d < 0:
			b.idle = 0
		default:
			b.idle = d
		}
		return nil
	}
}

// NewBudget returns a budget of size connections for the pools of this
// process to share: give it to each as Config.Budget (shoalpgx's
// Config.Budget, shoalgrpc's and shoalhttp's Options.Budget). size must be
// at least 1.
func NewBudget(size int, opts ...BudgetOption) (*LocalBudget, error) {
	if size < 1 || size > maxConnsLimit {
		return nil, fmt.Errorf("shoal: NewBudget(%d): the size must be in [1, %d]", size, maxConnsLimit)
	}
	b := &LocalBudget{
		name:    "budget",
		size:    size,
		idle:    defaultBudgetIdleTime,
		kick:    make(chan struct{}, 1),
		ask:     make(chan struct{}, 1),
		members: map[BudgetMember]*localMember{},
		changed: make(chan struct{}),
	}
	for _, o := range opts {
		if o == nil {
			continue
		}
		if err := o(b); err != nil {
			return nil, err
		}
	}
	b.free = make([]int, size)
	for i := range b.free {
		b.free[i] = size - 1 - i
	}
	return b, nil
}

var _ Budget = (*LocalBudget)(nil)

// Name returns the budget's name (BudgetName).
func (b *LocalBudget) Name() string { return b.name }

// Size returns how many connections the budget's pools may hold between
// them.
func (b *LocalBudget) Size() int { return b.size }

// Join adds a pool to the budget and sets its share, and the others', before
// it returns. New calls it; a pool joins once. It refuses a pool whose
// minimum (its MinConns, capped at its MaxConns) would bring the minimums of
// the pools joined above Size.
func (b *LocalBudget) Join(m BudgetMember) (leave func(), err error) {
	if m == nil {
		return nil, fmt.Errorf("shoal: budget %q: Join: nil member", b.name)
	}
	if !reflect.TypeOf(m).Comparable() {
		return nil, fmt.Errorf("shoal: budget %q: Join: a member of type %T cannot be told apart from others (not comparable)", b.name, m)
	}
	lm := &localMember{m: m, pushed: -1}
	if mc, ok := m.(interface{ MinConns() int }); ok {
		// Not cut to the size: a minimum above it is refused below, as
		// one that brings the sum above it is, rather than taking the
		// whole budget and leaving the next pool refused for it.
		lm.part.Min = max(mc.MinConns(), 0)
	}
	if n, ok := m.(interface{ Name() string }); ok {
		lm.name = n.Name()
	}
	d := min(max(m.Demand(), 0), b.size)

	b.mu.Lock()
	if _, dup := b.members[m]; dup {
		b.mu.Unlock()
		return nil, fmt.Errorf("shoal: budget %q: Join: this pool has joined already", b.name)
	}
	if b.sumMin+lm.part.Min > b.size {
		err := fmt.Errorf("shoal: budget %q of size %d: the pools' minimums (MinConns) would sum to %d with this pool's %d",
			b.name, b.size, b.sumMin+lm.part.Min, lm.part.Min)
		b.mu.Unlock()
		return nil, err
	}
	b.joined++
	if lm.name == "" {
		lm.name = fmt.Sprintf("pool-%d", b.joined)
	}
	lm.part.Smooth.Window = b.idle
	lm.part.Sample(time.Now(), 0, d, localSampleEvery)
	b.members[m] = lm
	b.order = append(b.order, lm)
	lm.reserved = lm.part.Min
	b.sumMin += lm.reserved
	b.recomputeLocked()
	start := !b.running
	b.running = true
	b.mu.Unlock()

	if start {
		go b.sampler()
	}
	b.pushShares()
	var once sync.Once
	return func() { once.Do(func() { b.leave(lm) }) }, nil
}

// leave takes lm out of the budget; its permits still out come back as
// their connections close. The others' shares grow at the sampler's next
// pass, which the kick makes at once: leave does not divide itself, since
// a division walks every pool and the pools of a Group that closes leave
// together, the kicks of a burst making one pass.
func (b *LocalBudget) leave(lm *localMember) {
	b.mu.Lock()
	lm.left = true
	delete(b.members, lm.m)
	for i, o := range b.order {
		if o == lm {
			b.order = append(b.order[:i], b.order[i+1:]...)
			break
		}
	}
	b.sumMin -= lm.reserved
	// For lm's own callers waiting in AcquireFor, which end when their
	// member leaves: the division that follows may change no share, and
	// then wakes nobody.
	b.broadcastLocked()
	b.mu.Unlock()
	b.wake()
}

// budgetMemberKey is the context key under which a pool names itself to
// its budget's Acquire.
type budgetMemberKey struct{}

// BudgetMemberFromContext returns the pool asking for a permit, from the
// ctx a pool passes Budget.Acquire: the member it joined with. A budget
// that serves several pools (LocalBudget; shoaletcd's budget) tells them
// apart by it. It returns nil for a ctx that no pool made.
func BudgetMemberFromContext(ctx context.Context) BudgetMember {
	m, _ := ctx.Value(budgetMemberKey{}).(BudgetMember)
	return m
}

// ContextWithBudgetMember returns ctx naming m as the pool asking for a
// permit, as a pool's own Acquire does: for a Budget that passes its
// members' requests on to another budget it joined them to under members
// of its own.
func ContextWithBudgetMember(ctx context.Context, m BudgetMember) context.Context {
	return context.WithValue(ctx, budgetMemberKey{}, m)
}

// errNotMember is Acquire's error for a ctx that names no pool of this
// budget.
var errNotMember = errors.New("no member of this budget asks for the permit; pools call Acquire themselves, with their own context")

// notMember is errNotMember, naming the budget.
func (b *LocalBudget) notMember() error {
	return fmt.Errorf("shoal: budget %q: %w", b.name, errNotMember)
}

// Acquire returns a permit for the pool named by ctx (see
// BudgetMemberFromContext) to open one connection: AcquireFor that pool.
func (b *LocalBudget) Acquire(ctx context.Context) (BudgetPermit, error) {
	return b.AcquireFor(ctx, BudgetMemberFromContext(ctx))
}

// AcquireFor returns a permit for m, a member joined through Join, to open
// one connection, waiting until m holds fewer permits than its share and
// the budget fewer than Size, or until ctx ends or m leaves. Pools call
// Acquire; AcquireFor is for code that joins members of its own, such as
// shoalhttp, whose first connection to an origin is dialled before the
// origin's pool exists.
func (b *LocalBudget) AcquireFor(ctx context.Context, m BudgetMember) (BudgetPermit, error) {
	if m == nil || !reflect.TypeOf(m).Comparable() {
		return nil, b.notMember()
	}
	b.mu.Lock()
	lm := b.members[m]
	if lm == nil {
		b.mu.Unlock()
		return nil, b.notMember()
	}
	for {
		if lm.left {
			b.mu.Unlock()
			return nil, fmt.Errorf("shoal: budget %q: pool %q has left it", b.name, lm.name)
		}
		if err := ctx.Err(); err != nil {
			b.mu.Unlock()
			return nil, err
		}
		if lm.held < lm.part.Share && b.out < b.size {
			n := len(b.free)
			p := &localPermit{b: b, lm: lm, slot: b.free[n-1]}
			b.free = b.free[:n-1]
			b.out++
			lm.held++
			b.mu.Unlock()
			return p, nil
		}
		short := lm.held >= lm.part.Share // not only waiting for a peer's close
		ch := b.changed
		b.mu.Unlock()
		if short {
			b.AskShare() // a peer keeping idle permits gives one up now
		}
		select {
		case <-ch:
		case <-ctx.Done():
		}
		b.mu.Lock()
	}
}

// localPermit is a LocalBudget's leave to keep one connection open.
type localPermit struct {
	b        *LocalBudget
	lm       *localMember
	slot     int
	released atomic.Bool
}

// Slot returns the permit's number, in [0, Size), unique among the permits
// out.
func (p *localPermit) Slot() int { return p.slot }

// Release gives the permit back; a second call does nothing.
func (p *localPermit) Release() {
	if p.released.Swap(true) {
		return
	}
	b := p.b
	b.mu.Lock()
	b.out--
	p.lm.held--
	b.free = append(b.free, p.slot)
	b.broadcastLocked()
	b.mu.Unlock()
}

func init() { permitmove.Move = movePermit }

// movePermit moves a permit to another member of its budget (see
// permitmove.Move): shoalhttp hands an origin's first connection, dialled
// under a member of its own, to the origin's pool with its permit.
func movePermit(permit, to any) error {
	p, ok := permit.(*localPermit)
	if !ok {
		return fmt.Errorf("shoal: permit of type %T is not a LocalBudget's", permit)
	}
	m, ok := to.(BudgetMember)
	if !ok || m == nil || !reflect.TypeOf(m).Comparable() {
		return p.b.notMember()
	}
	b := p.b
	b.mu.Lock()
	defer b.mu.Unlock()
	lm := b.members[m]
	switch {
	case lm == nil:
		return b.notMember()
	case p.released.Load():
		return errors.New("shoal: LocalBudget: moving a permit released")
	}
	p.lm.held--
	lm.held++
	p.lm = lm
	b.broadcastLocked() // the member it left may be under its share now
	return nil
}

// sampler is the budget's goroutine while any pool is joined: it samples
// every pool's demand, recomputes the shares and tells the pools theirs.
func (b *LocalBudget) sampler() {
	t := time.NewTicker(localSampleEvery)
	defer t.Stop()
	for regular := true; b.sample(time.Now(), regular); {
		b.pushShares()
		regular = true
		last := time.Now()
		var soon <-chan time.Time // a division asked for within localKickGap of the last
	wait:
		for {
			select {
			case <-t.C:
			case <-b.kick:
			case <-soon:
				regular = false
			case <-b.ask:
				if d := localKickGap - time.Since(last); d > 0 {
					if soon == nil {
						soon = time.After(d)
					}
					continue wait
				}
				regular = false
			}
			break
		}
	}
}

// sample reads every pool's demand and minimum, outside mu (a pool's Demand may take
// its engine's lock, under which the pool may release a permit), and
// recomputes the shares. A sample between the regular ones (a pool waits
// beyond its share) leaves the pools' need, an average over the regular
// samples, alone. It returns false, and marks the sampler stopped, once no
// pool is left.
func (b *LocalBudget) sample(now time.Time, regular bool) bool {
	b.mu.Lock()
	if len(b.order) == 0 {
		b.running = false
		clear(b.parts) // holds the pools that left
		b.mu.Unlock()
		return false
	}
	ms := append([]*localMember(nil), b.order...)
	b.mu.Unlock()
	ds := make([]int, len(ms))
	busy := make([]int, len(ms))
	mins := make([]int, len(ms))
	for i, lm := range ms {
		mins[i] = -1
		if mc, ok := lm.m.(interface{ MinConns() int }); ok {
			mins[i] = max(mc.MinConns(), 0)
		}
		if l, ok := lm.m.(interface{ Load() (busy, demand int) }); ok {
			busy[i], ds[i] = l.Load()
		} else {
			ds[i] = lm.m.Demand()
			busy[i] = ds[i]
		}
		ds[i] = min(max(ds[i], 0), b.size)
		busy[i] = min(max(busy[i], 0), ds[i])
	}
	b.mu.Lock()
	for i, lm := range ms {
		if mins[i] >= 0 && !lm.left {
			lm.part.Min = min(mins[i], lm.reserved)
		}
		switch {
		case lm.left:
		case regular:
			lm.part.Sample(now, busy[i], ds[i], localSampleEvery)
		default:
			lm.part.Look(now, ds[i])
		}
	}
	if b.recomputeLocked() {
		b.broadcastLocked()
	}
	b.mu.Unlock()
	return true
}

// recomputeLocked divides Size among the pools joined
// (fairshare.DividePools, as shoaletcd's pools of one member divide its
// share, through b.div, which skips a division that would give the last
// one's shares) and reports whether a share changed.
func (b *LocalBudget) recomputeLocked() bool {
	clear(b.parts) // no pool that left stays reachable from here
	parts := b.parts[:0]
	claimed, idle := 0, false
	for _, lm := range b.order {
		lm.part.Held = lm.held
		claimed += max(lm.part.Min, lm.part.Demand)
		idle = idle || lm.held > lm.part.Now
		parts = append(parts, &lm.part)
	}
	b.parts = parts
	b.spare.Store(claimed < b.size && idle)
	return b.div.Divide(b.size, parts, time.Now(), b.idle, localSampleEvery)
}

// pushShares tells every pool whose share changed its new one, without mu
// (SetShare takes the pool's locks and may close connections), under
// pushMu, so that the calls reach each pool in the order computed.
func (b *LocalBudget) pushShares() {
	b.pushMu.Lock()
	defer b.pushMu.Unlock()
	type push struct {
		m     BudgetMember
		share int
	}
	var todo []push
	b.mu.Lock()
	for _, lm := range b.order {
		if lm.part.Share != lm.pushed {
			lm.pushed = lm.part.Share
			todo = append(todo, push{lm.m, lm.part.Share})
		}
	}
	b.mu.Unlock()
	for _, p := range todo {
		p.m.SetShare(p.share)
	}
}

// broadcastLocked wakes every Acquire waiting for a change.
func (b *LocalBudget) broadcastLocked() {
	close(b.changed)
	b.changed = make(chan struct{})
}

// AskShare asks for a division now rather than at the next sample, so
// that a pool keeping idle connections nobody asked for gives them up at
// once to a pool held back by its share (BudgetAsker) or a member waiting
// in AcquireFor beyond its share; no sooner than localKickGap after the
// last division. It does nothing unless the last division met every
// demand and left a pool holding idle connections: under contention,
// shares move at the regular samples (see spare).
func (b *LocalBudget) AskShare() {
	if !b.spare.Load() {
		return
	}
	select {
	case b.ask <- struct{}{}:
	default:
	}
}

// wake pokes the sampler without blocking.
func (b *LocalBudget) wake() {
	select {
	case b.kick <- struct{}{}:
	default:
	}
}
