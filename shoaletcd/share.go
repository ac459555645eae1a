package shoaletcd

import (
	"time"

	"github.com/shoalpool/shoal"
)

// staleAfter is how long without an answer from etcd before the member
// counts it as unreachable: a keep-alive is due every TTL/3, so two missed
// ones and a second of slack.
func (b *Budget) staleAfter() time.Duration { return b.opts.TTL*2/3 + time.Second }

// onlineLocked reports whether etcd answers now: a lease is kept alive,
// the last request succeeded, and etcd answered recently.
func (b *Budget) onlineLocked(now time.Time) bool {
	return b.session && !b.opFailed && now.Sub(b.lastContact) < b.staleAfter()
}

// contactLocked records an answer from etcd (ok) or a request that failed.
func (b *Budget) contactLocked(ok bool) {
	if ok {
		b.lastContact = time.Now()
	}
	b.opFailed = !ok
}

// heldLocked counts the connections this member answers for: permits out
// plus idle slots kept for the next dial (slots being deleted not counted).
func (b *Budget) heldLocked() int {
	n := len(b.permits)
	for _, o := range b.owned {
		if o.permit == nil && !o.deleting {
			n++
		}
	}
	return n
}

// coveredLocked counts the slot keys this member owns and keeps.
func (b *Budget) coveredLocked() int {
	n := 0
	for _, o := range b.owned {
		if !o.deleting {
			n++
		}
	}
	return n
}

// uncoveredLocked counts the permits out that no slot key backs: granted
// on Min before the member joined, or whose key was lost with a lease.
func (b *Budget) uncoveredLocked() int {
	n := 0
	for p := range b.permits {
		if p.cover < 0 {
			n++
		}
	}
	return n
}

// revocableLocked reports whether every permit without a key can be taken
// back by itself (OnRevoke, which the core pool always gives): then the
// over-budget member's disputed connections close one by one, and capping
// its share as well would close one of its good connections for each.
func (b *Budget) revocableLocked() bool {
	for p := range b.permits {
		if p.cover < 0 && p.revoke == nil {
			return false
		}
	}
	return true
}

// poolShareLocked is what the pool is told it may hold.
//
//   - Before the first join: Min, granted locally.
//   - Online: the fair share; but while some permits have no slot key,
//     no more than it holds (no growth) until a key is found for each,
//     and once no free key was left for one (the member is over budget
//     after a rejoin), no more than the keys it owns, so connections close
//     as they are released; unless each keyless permit can be revoked, and
//     then only those close.
//   - Offline after a join: never more than it holds now (no growth) and
//     never less (nothing is dropped because etcd is away).
func (b *Budget) poolShareLocked() int {
	switch {
	case b.left || b.closed:
		return 0
	case !b.joined:
		return b.opts.Min
	case !b.onlineLocked(time.Now()):
		return min(b.share, b.heldLocked())
	case b.uncoveredLocked() == 0:
		return b.share
	case b.overBudget && !b.revocableLocked():
		return min(b.share, b.coveredLocked())
	default:
		return min(b.share, b.heldLocked())
	}
}

// pushShare tells each pool its part of the member's share if it changed.
// SetShare runs without mu, under shareMu, so calls reach each pool in the
// order computed.
func (b *Budget) pushShare() {
	b.shareMu.Lock()
	defer b.shareMu.Unlock()
	type push struct {
		m     shoal.BudgetMember
		share int
	}
	var todo []push
	b.mu.Lock()
	b.partsLocked()
	for _, s := range b.pools {
		if s.part.Share != s.pushed {
			s.pushed = s.part.Share
			todo = append(todo, push{s.m, s.part.Share})
		}
	}
	b.mu.Unlock()
	for _, p := range todo {
		p.m.SetShare(p.share)
	}
}

// pushShares is the goroutine that samples the pools' demand and pushes
// their shares every tick and when woken, so that a Release (called by a
// pool, perhaps under its locks) never calls back into a pool itself. It
// runs whether etcd answers or not: the member's pools keep sharing what
// it holds. An ask (AskShare) is served at once, with a fresh look at the
// pools' demand, unless the last division was less than askGap ago; then
// at askGap after it.
func (b *Budget) pushShares() {
	defer b.wg.Done()
	tick := time.NewTicker(tickEvery)
	defer tick.Stop()
	var last time.Time
	var soon <-chan time.Time // an ask that came within askGap of the last division
	for {
		select {
		case <-b.ctx.Done():
			return
		case <-b.shareKick:
		case <-tick.C:
			b.samplePools(time.Now(), true)
		case <-soon:
			soon = nil
			b.samplePools(time.Now(), false)
			b.asksServed.Add(1)
		case <-b.ask:
			if d := askGap - time.Since(last); d > 0 {
				if soon == nil {
					soon = time.After(d)
				}
				continue
			}
			b.samplePools(time.Now(), false)
			b.asksServed.Add(1)
		}
		b.pushShare()
		last = time.Now()
	}
}

var _ shoal.BudgetAsker = (*Budget)(nil)

// AskShare asks for the member's share to be divided among its pools now
// rather than at the next tick (shoal.BudgetAsker): a pool held back by its
// part then gets the connections another of the member's pools keeps idle
// within milliseconds, no sooner than askGap after the last division. It
// does nothing unless the last division met every pool's demand and left
// one holding connections it does not use: under contention the parts
// move at the ticks, as sparingly as ever. It never asks etcd for more:
// the member's share moves between members at their own pace.
func (b *Budget) AskShare() {
	if !b.spare.Load() {
		return
	}
	select {
	case b.ask <- struct{}{}:
	default:
	}
}

// trimLocked marks idle slot keys for deletion until the member keeps no
// more than its share, and deletes idle keys of slots that were fenced.
// Keys lent to permits go when those are released. The run loop does the
// deleting. It returns whether anything was marked.
func (b *Budget) trimLocked() bool {
	target := b.share
	if b.left || b.closed {
		target = 0
	}
	now := time.Now()
	keep := b.coveredLocked()
	marked := false
	for k, o := range b.owned {
		if o.permit != nil || o.deleting {
			continue
		}
		if keep > target || b.avoidedLocked(k, now) {
			o.deleting = true
			keep--
			marked = true
		}
	}
	return marked
}

// avoidedLocked reports whether slot k was fenced recently (its advisory
// lock held by a backend of someone else) and should not be handed out.
func (b *Budget) avoidedLocked(k int, now time.Time) bool {
	until, ok := b.avoid[k]
	if ok && !now.Before(until) {
		delete(b.avoid, k)
		return false
	}
	return ok
}

// avoidFor is how long a fenced slot is passed over. The other backend
// holding its lock may belong to a process paused past its lease (gone
// only when it resumes or is killed) or to a member rejoining after etcd
// came back, which covers or closes it within moments; the slot is
// suspect, so trying it again costs one look at the server, not a
// connection, and a short pause serves both.
func (b *Budget) avoidFor() time.Duration { return min(b.opts.TTL, time.Second) }
