package shoaletcd

import (
	"context"
	"fmt"
	"time"

	"github.com/shoalpool/shoal"
)

// permit is a leave to keep one connection open. Its slot is the number
// its connection is fenced with; cover is the slot key that counts it in
// etcd, which is the same number except after a rejoin found the key
// taken, and -1 while no key counts it (granted on Min before the member
// joined, or lost with a lease).
type permit struct {
	b        *Budget
	seat     *seat // the pool it was granted to
	slot     int
	cover    int // guarded by b.mu
	fenced   bool
	released bool
	suspect  bool   // see Suspect
	revoke   func() // from the pool (OnRevoke): closes this permit's connection; guarded by b.mu
}

// OnRevoke keeps the pool's way to close this permit's connection, which
// the budget uses when the connection's slot was taken while etcd was away
// (see cover). The core calls it once, as the connection opens.
func (p *permit) OnRevoke(revoke func()) {
	p.b.mu.Lock()
	p.revoke = revoke
	p.b.mu.Unlock()
}

// Slot returns the permit's slot number, in [0, Size).
func (p *permit) Slot() int { return p.slot }

// Fenced tells the budget that the server holds this slot's lock for
// another backend: a connection of a process paused past its lease, still
// alive at the server although its key was given away. The slot is passed
// over for a second and its key given back when the permit is
// released; the next Acquire gets another. shoalpgx calls it through
// interface{ Fenced() }.
func (p *permit) Fenced() {
	b := p.b
	b.mu.Lock()
	defer b.mu.Unlock()
	p.fenced = true
	b.avoid[p.slot] = time.Now().Add(b.avoidFor())
}

// Release gives the permit back. Its key is kept for the next dial while
// the member holds no more than its share, and deleted otherwise (or if
// the slot was fenced), so others can grow. A second call does nothing.
func (p *permit) Release() {
	b := p.b
	b.mu.Lock()
	if p.released {
		b.mu.Unlock()
		return
	}
	p.released = true
	delete(b.permits, p)
	p.seat.held--
	if !p.fenced {
		// Its connection held the slot (or never got as far as the
		// server): no one else's is known to be there.
		delete(b.suspect, p.slot)
	}
	if b.slotUsers[p.slot]--; b.slotUsers[p.slot] <= 0 {
		delete(b.slotUsers, p.slot)
	}
	if p.cover >= 0 {
		if o := b.owned[p.cover]; o != nil && o.permit == p {
			o.permit = nil
			if p.fenced {
				o.deleting = true
			}
		}
	}
	b.trimLocked()
	b.broadcastLocked()
	b.mu.Unlock()
	b.wake()
}

// grantLocked hands out a permit to pool s with slot number slot, backed
// by key cover (or none, -1).
func (b *Budget) grantLocked(s *seat, slot, cover int) *permit {
	// Before joining, the member cannot know who holds a number: every
	// local permit is suspect.
	p := &permit{b: b, seat: s, slot: slot, cover: cover, suspect: b.suspect[slot] || cover < 0}
	b.permits[p] = struct{}{}
	s.held++
	b.slotUsers[slot]++
	if cover >= 0 {
		b.owned[cover].permit = p
	}
	return p
}

// Acquire returns a permit to open one connection for the pool ctx names
// (shoal.BudgetMemberFromContext; without one, the one pool joined),
// waiting until that pool may hold one more, the member may too, and a
// slot is free, or until ctx ends or the pool leaves. In order, it
// lends a slot key the member already owns (no request to etcd), creates a
// free one (one transaction), or, before the member has joined etcd,
// grants one locally within Min. It never creates a key while etcd does
// not answer, so a member cut off from etcd does not grow. The permit also
// has a Fenced method (see shoalpgx).
func (b *Budget) Acquire(ctx context.Context) (shoal.BudgetPermit, error) {
	tried := map[int]bool{}
	for {
		b.mu.Lock()
		if b.closed {
			b.mu.Unlock()
			return nil, ErrClosed
		}
		if err := ctx.Err(); err != nil {
			b.mu.Unlock()
			return nil, err
		}
		s := b.seatLocked(ctx)
		if s == nil || s.left {
			// Counted under mu: other pools may be joining or leaving.
			err := fmt.Errorf("shoaletcd: budget %q: Acquire for no pool of this Budget (pools call it with their own context; %d joined)", b.opts.Name, len(b.pools))
			b.mu.Unlock()
			return nil, err
		}
		now := time.Now()
		b.partsLocked()
		if len(b.permits) < b.poolShareLocked() && s.held < s.part.Share {
			if k, ok := b.idleKeyLocked(); ok && b.slotUsers[k] == 0 {
				p := b.grantLocked(s, k, k)
				b.mu.Unlock()
				return p, nil
			}
			if !b.joined {
				if k, ok := b.localSlotLocked(); ok {
					p := b.grantLocked(s, k, -1)
					b.mu.Unlock()
					return p, nil
				}
			} else if b.onlineLocked(now) && b.coveredLocked()+len(b.pending) < b.share {
				if k, ok := b.freeSlotLocked(-1, tried); ok {
					p, retry, err := b.createAndGrantLocked(ctx, s, k)
					if p != nil || err != nil {
						return p, err
					}
					tried[k] = true
					if retry {
						continue
					}
					b.mu.Lock()
				}
			}
		}
		short := s.held >= s.part.Share // held back by its part, not only waiting for a slot
		ch := b.changed
		b.mu.Unlock()
		if short {
			b.AskShare() // another of the member's pools keeping idle permits gives one up now
		}
		t := time.NewTimer(500 * time.Millisecond)
		select {
		case <-ch:
		case <-t.C:
		case <-ctx.Done():
		}
		t.Stop()
		clear(tried)
	}
}

// createAndGrantLocked creates slot key k and grants a permit on it. It is
// called with mu held and returns with it released. With no permit and no
// error, retry says whether to try another key at once (k was taken) or
// to wait (etcd did not answer).
func (b *Budget) createAndGrantLocked(ctx context.Context, s *seat, k int) (p *permit, retry bool, err error) {
	b.pending[k] = true
	lease := b.lease
	b.mu.Unlock()
	rev, cerr := b.createSlot(ctx, lease, k)
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.pending, k)
	if rev > 0 && (!b.session || b.lease != lease) {
		// The lease was lost while the key was being created: a rejoin
		// under way has read the slots without it and will revoke the
		// lease it is under, so it would count no connection. It goes
		// with that lease; the next try creates one under the new lease.
		return nil, false, nil
	}
	if rev > 0 {
		b.localRev = max(b.localRev, rev)
		b.owned[k] = &ownedSlot{rev: rev}
		if b.closed {
			return nil, false, ErrClosed
		}
		return b.grantLocked(s, k, k), false, nil
	}
	b.reconcileLocked()
	if ctx.Err() != nil {
		return nil, false, ctx.Err()
	}
	return nil, cerr == nil, nil
}
