package shoaletcd

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"sync"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/fairshare"
)

// A member serves any number of its process's pools. In etcd it is one
// member, whose demand is the sum of its pools' demands and whose minimum
// is Options.Min; in the process, its pools divide what the member may
// hold (the share poolShareLocked gives) among themselves as a
// shoal.LocalBudget's pools divide its Size, with fairshare.DividePools:
// each pool's MinConns first, the rest max-min fair by its demand,
// smoothed over IdleTime, and while a pool waits beyond its part, toward
// the division by need, as far as the pools that wait need. One pool gets the whole share, as before pools could
// share a member.

// seat is one pool of this process in the budget.
type seat struct {
	m      shoal.BudgetMember
	name   string
	part   fairshare.Pool // its demand, need and part of the member's share (Share), as partsLocked last set it
	pushed int            // what SetShare was told last; -1 before the first time
	held   int            // permits out
	left   bool
}

// Join adds a pool to the pools this member serves, sets its share (and
// the other pools') before it returns, and returns the pool's leave. A
// pool's leave gives its part back to the other pools; once the last pool
// has left, the member gives every slot back and leaves the budget in
// etcd, so the other members grow, and a pool joining later makes it
// rejoin. A pool that has joined already gets ErrJoined, a closed Budget
// ErrClosed, and a budget whose size in etcd is no longer this member's
// Size (changed while the member had no pool) ErrSizeMismatch.
func (b *Budget) Join(m shoal.BudgetMember) (leave func(), err error) {
	if m == nil {
		return nil, errors.New("shoaletcd: Join: nil member")
	}
	if !reflect.TypeOf(m).Comparable() {
		return nil, fmt.Errorf("shoaletcd: Join: a member of type %T cannot be told apart from others (not comparable)", m)
	}
	s := &seat{m: m, pushed: -1}
	s.part.Smooth.Window = b.opts.IdleTime
	if mc, ok := m.(interface{ MinConns() int }); ok {
		s.part.Min = min(max(mc.MinConns(), 0), b.opts.Size)
	}
	if n, ok := m.(interface{ Name() string }); ok {
		s.name = n.Name()
	}
	d := min(max(m.Demand(), 0), b.opts.Size)

	b.mu.Lock()
	if b.closed {
		b.mu.Unlock()
		return nil, fmt.Errorf("%w: %q; a pool cannot join it", ErrClosed, b.opts.Name)
	}
	for _, o := range b.pools {
		if o.m == m {
			b.mu.Unlock()
			return nil, fmt.Errorf("%w: this pool has joined %q already", ErrJoined, b.opts.Name)
		}
	}
	if b.view.size != 0 && b.view.size != b.opts.Size {
		// Resized while this member had no pool (and so no record):
		// members alive must agree on the size.
		err := fmt.Errorf("%w: budget %q has size %d in etcd (%s), and this member has Size %d; every member must use the same Size",
			ErrSizeMismatch, b.opts.Name, b.view.size, b.keys.size(), b.opts.Size)
		b.mu.Unlock()
		return nil, err
	}
	b.joins++
	if s.name == "" {
		s.name = fmt.Sprintf("pool-%d", b.joins)
	}
	s.part.Sample(time.Now(), 0, d, tickEvery)
	b.pools = append(b.pools, s)
	if b.left {
		// Every pool had left, and the member with them: publish again.
		// The record is forced out by its pool count, which no record
		// has, rather than by a demand below zero, which Status shows.
		b.left = false
		b.pubPools = -1
		b.recomputeLocked()
	}
	b.broadcastLocked()
	b.mu.Unlock()
	b.pushShare()
	b.wake()
	var once sync.Once
	return func() { once.Do(func() { b.leave(s) }) }, nil
}

// leave takes s out. With the last pool gone the member leaves too:
// demand and share drop to zero, idle slots are deleted, and the run loop
// deletes the member record.
func (b *Budget) leave(s *seat) {
	b.mu.Lock()
	s.left = true
	for i, o := range b.pools {
		if o == s {
			b.pools = append(b.pools[:i], b.pools[i+1:]...)
			break
		}
	}
	if len(b.pools) == 0 {
		b.left = true
		// Out of the budget, it publishes no demand: its record goes.
		b.published = 0
		b.trimLocked()
	}
	b.broadcastLocked()
	b.mu.Unlock()
	b.wake()
}

// partsLocked divides what the member may hold among its pools and
// records each one's part, and whether an ask could move one (spare); a
// part that changed wakes the pools waiting in Acquire.
func (b *Budget) partsLocked() {
	total := b.poolShareLocked()
	parts := make([]*fairshare.Pool, len(b.pools))
	claimed, idle := 0, false
	for i, s := range b.pools {
		s.part.Held = s.held
		claimed += max(s.part.Min, s.part.Demand)
		idle = idle || s.held > s.part.Now
		parts[i] = &s.part
	}
	b.spare.Store(claimed < total && idle)
	if fairshare.DividePools(total, parts, time.Now(), b.opts.IdleTime, tickEvery) {
		b.broadcastLocked() // a pool waiting in Acquire may hold more now
	}
}

// seatLocked returns the pool that asks, named by ctx
// (shoal.BudgetMemberFromContext), or the one pool joined when ctx names
// none (a caller of Acquire other than a pool), or nil.
func (b *Budget) seatLocked(ctx context.Context) *seat {
	m := shoal.BudgetMemberFromContext(ctx)
	if m == nil {
		if len(b.pools) == 1 {
			return b.pools[0]
		}
		return nil
	}
	if !reflect.TypeOf(m).Comparable() {
		return nil
	}
	for _, s := range b.pools {
		if s.m == m {
			return s
		}
	}
	return nil
}

// pools returns the pools joined now, for reading their demand without mu
// (a pool's Demand may take a lock under which it releases a permit).
func (b *Budget) poolsNow() []*seat {
	b.mu.Lock()
	defer b.mu.Unlock()
	return append([]*seat(nil), b.pools...)
}

// demandOf sums the demand of pools, read without mu, capped at Size: the
// demand the member publishes, before smoothing.
func (b *Budget) demandOf(pools []*seat) []int {
	ds := make([]int, len(pools))
	for i, s := range pools {
		ds[i] = min(max(s.m.Demand(), 0), b.opts.Size)
	}
	return ds
}

// samplePools records each pool's demand, need and minimum, so that the
// member's share moves between its pools as a shoal.LocalBudget's Size
// does between its pools. A look between the regular samples (an ask)
// leaves the pools' need, an average over the regular samples, alone.
func (b *Budget) samplePools(now time.Time, regular bool) {
	pools := b.poolsNow()
	busy := make([]int, len(pools))
	ds := make([]int, len(pools))
	mins := make([]int, len(pools))
	for i, s := range pools {
		// A pool's MinConns is kept only up to its MaxConns, which
		// SetMaxConns may have lowered: the rest goes to the other pools.
		mins[i] = -1
		if mc, ok := s.m.(interface{ MinConns() int }); ok {
			mins[i] = min(max(mc.MinConns(), 0), b.opts.Size)
		}
		if l, ok := s.m.(interface{ Load() (busy, demand int) }); ok {
			busy[i], ds[i] = l.Load()
		} else {
			ds[i] = s.m.Demand()
			busy[i] = ds[i]
		}
		ds[i] = min(max(ds[i], 0), b.opts.Size)
		busy[i] = min(max(busy[i], 0), ds[i])
	}
	b.mu.Lock()
	for i, s := range pools {
		if mins[i] >= 0 && !s.left {
			s.part.Min = mins[i]
		}
		switch {
		case s.left:
		case regular:
			s.part.Sample(now, busy[i], ds[i], tickEvery)
		default:
			s.part.Look(now, ds[i])
		}
	}
	b.mu.Unlock()
}

// PoolStatus is one pool's part of its member's share.
type PoolStatus struct {
	Name   string // the pool's Config.Name, or "pool-N" (the Nth to join) without one
	Min    int    // its MinConns, granted first within the member's share
	Demand int    // its demand, the highest of the last IdleTime
	Share  int    // its part of the member's share: what SetShare was told last (0 before)
	Held   int    // permits it holds
}
