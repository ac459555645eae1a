package shoaletcd

import (
	"context"
	"encoding/json"
	"errors"
	"time"

	"github.com/shoalpool/shoal/internal/fairshare"
	clientv3 "go.etcd.io/etcd/client/v3"
)

const (
	// tickEvery is how often the run loop samples demand and does its
	// chores (deleting given-back keys, covering permits without a key).
	tickEvery = 50 * time.Millisecond
	// askGap is the least time between two divisions among the member's
	// pools when a pool asks for one (AskShare): a pool held to its part
	// asks at every acquire, and a division costs a look at every pool.
	askGap = 5 * time.Millisecond
	// publishEvery bounds how often the member record is rewritten.
	publishEvery = 150 * time.Millisecond
	// rejoinBackoffMax bounds the wait between attempts to join.
	rejoinBackoffMax = 2 * time.Second
)

// run is the budget's one background goroutine: it joins (first, or again
// after the lease was lost), then serves the session until it ends.
func (b *Budget) run(s *session) {
	defer b.wg.Done()
	backoff := 250 * time.Millisecond
	var smooth = fairshare.Smoother{Window: b.opts.IdleTime}
	var lastErr string
	for b.ctx.Err() == nil {
		if s == nil {
			b.mu.Lock()
			rejoin := b.joined
			b.mu.Unlock()
			var err error
			s, err = b.join(b.ctx, rejoin)
			if err != nil {
				if b.ctx.Err() != nil {
					return
				}
				// A wrong size or minimums, or a refusal, is the
				// operator's to fix: say it loudly, once per distinct
				// error, and keep trying.
				if msg := err.Error(); msg != lastErr {
					lastErr = msg
					level := b.log.Debug
					if operatorsToFix(err) {
						level = b.log.Error
					}
					level("shoaletcd: joining the budget failed; trying again", "err", err)
				}
				select {
				case <-b.ctx.Done():
					return
				case <-time.After(backoff):
				}
				backoff = min(2*backoff, rejoinBackoffMax)
				continue
			}
			b.log.Info("shoaletcd: joined the budget", "id", b.id, "rejoin", rejoin, "size", b.opts.Size, "min", b.opts.Min)
			backoff, lastErr = 250*time.Millisecond, ""
		}
		b.serve(s, &smooth)
		s = nil
	}
}

// serve keeps session s: its lease alive, the view current through a
// watch, the member record current, the share recomputed. It returns when
// the lease is lost or the budget closed.
func (b *Budget) serve(s *session, smooth *fairshare.Smoother) {
	kctx, kcancel := context.WithCancel(b.ctx)
	defer kcancel()
	ka, err := b.client.KeepAlive(kctx, s.lease)
	if err != nil {
		b.lost(err)
		return
	}
	b.mu.Lock()
	rejoined := b.view.rev != 0 // a view from an earlier session: this is a rejoin
	b.view.reset(b.keys, s.kvs, s.rev)
	if rejoined {
		b.noteResyncedLocked()
	}
	b.recomputeLocked()
	b.reconcileLocked()
	b.broadcastLocked()
	b.mu.Unlock()
	b.wake()

	var wcancel context.CancelFunc = func() {}
	defer func() { wcancel() }()
	watch := func(rev int64) clientv3.WatchChan {
		wcancel()
		var wctx context.Context
		wctx, wcancel = context.WithCancel(b.ctx)
		return b.client.Watch(clientv3.WithRequireLeader(wctx), b.keys.root, clientv3.WithPrefix(), clientv3.WithRev(rev+1))
	}
	wch := watch(s.rev)
	tick := time.NewTicker(tickEvery)
	defer tick.Stop()
	var lastPublish time.Time
	wasOnline := true
	memberGone := false
	for {
		select {
		case <-b.ctx.Done():
			return
		case _, ok := <-ka:
			if !ok && b.ctx.Err() != nil {
				return // closing: the keep-alive ended with b.ctx
			}
			if !ok {
				b.lost(errors.New("the keep-alive stream ended"))
				return
			}
			b.mu.Lock()
			b.contactLocked(true)
			b.mu.Unlock()
			continue
		case wr, ok := <-wch:
			if !ok || wr.Canceled || wr.Err() != nil {
				// Compacted, leader lost, or the stream broke: read the
				// budget again at the next tick and watch from there.
				wch = nil
				continue
			}
			b.apply(wr)
			continue
		case <-tick.C:
		case <-b.kick:
		}
		if wch == nil {
			if rev, ok := b.resync(); ok {
				wch = watch(rev)
			}
		}
		now := time.Now()
		lastPublish, memberGone = b.publish(s.lease, smooth, now, lastPublish, memberGone)
		b.deleteGivenBack()
		b.cover()
		b.straighten()
		b.mu.Lock()
		online := b.onlineLocked(now)
		b.mu.Unlock()
		if online != wasOnline {
			wasOnline = online
			if online {
				b.log.Info("shoaletcd: etcd answers again")
			} else {
				b.log.Warn("shoaletcd: etcd does not answer; serving on the slots held, not growing")
			}
		}
		// Only the share: kicking this loop from its own pass would run it
		// flat out (it ate two thirds of a worker's CPU in bench/cluster)
		// instead of on its tick, a watch event, or a permit's need.
		b.kickShare()
	}
}

// apply brings the view up to a watch response. The view's revision is
// that of the last event seen (not the response header's, which a watch
// catching up reports ahead of the events it has sent).
func (b *Budget) apply(wr clientv3.WatchResponse) {
	b.mu.Lock()
	defer b.mu.Unlock()
	b.noteVanishedLocked(wr.Events)
	for _, ev := range wr.Events {
		if ev.Type == clientv3.EventTypeDelete {
			b.view.del(b.keys, string(ev.Kv.Key))
		} else {
			b.view.put(b.keys, ev.Kv)
		}
		b.view.rev = max(b.view.rev, ev.Kv.ModRevision)
	}
	if wr.IsProgressNotify() {
		b.view.rev = max(b.view.rev, wr.Header.Revision)
	}
	b.contactLocked(true)
	b.recomputeLocked()
	b.reconcileLocked()
	b.broadcastLocked()
	b.wake()
}

// resync reads the whole budget again after the watch broke.
func (b *Budget) resync() (int64, bool) {
	c, cancel := context.WithTimeout(b.ctx, b.opts.opTimeout())
	defer cancel()
	r, err := b.client.Get(c, b.keys.root, clientv3.WithPrefix())
	b.noteResult(b.ctx, err)
	if err != nil {
		return 0, false
	}
	b.mu.Lock()
	b.view.reset(b.keys, r.Kvs, r.Header.Revision)
	b.noteResyncedLocked()
	b.recomputeLocked()
	b.reconcileLocked()
	b.broadcastLocked()
	b.mu.Unlock()
	return r.Header.Revision, true
}

// lost ends a session: the lease expired or could not be kept alive. The
// permits out are kept (nothing is dropped); idle keys are forgotten, as
// they are no longer this member's; the run loop rejoins.
func (b *Budget) lost(err error) {
	b.mu.Lock()
	b.session = false
	for k, o := range b.owned {
		if o.permit == nil {
			delete(b.owned, k)
		}
	}
	closed := b.closed
	b.broadcastLocked()
	b.mu.Unlock()
	if !closed && b.ctx.Err() == nil {
		b.log.Warn("shoaletcd: lease lost; keeping every connection and rejoining", "err", err)
	}
	b.wake()
}

// publish samples the pool's demand and rewrites the member record when
// the smoothed demand or the number of pools changed, at most every
// publishEvery. After leave it
// deletes the record instead, once.
func (b *Budget) publish(lease clientv3.LeaseID, smooth *fairshare.Smoother, now, last time.Time, gone bool) (time.Time, bool) {
	b.mu.Lock()
	pools, left, published, pubPools := append([]*seat(nil), b.pools...), b.left, b.published, b.pubPools
	b.mu.Unlock()
	if left {
		if gone {
			return last, true
		}
		c, cancel := context.WithTimeout(b.ctx, b.opts.opTimeout())
		defer cancel()
		_, err := b.client.Delete(c, b.keys.member(b.id))
		b.noteResult(b.ctx, err)
		return now, err == nil
	}
	d := smooth.Add(now, min(fairshare.Sum(b.demandOf(pools)), b.opts.Size))
	if (d == published && len(pools) == pubPools) || now.Sub(last) < publishEvery {
		return last, false
	}
	b.mu.Lock()
	rec := b.recordLocked()
	b.mu.Unlock()
	rec.Demand = d
	js, _ := json.Marshal(rec)
	c, cancel := context.WithTimeout(b.ctx, b.opts.opTimeout())
	defer cancel()
	_, err := b.client.Put(c, b.keys.member(b.id), string(js), clientv3.WithLease(lease))
	b.noteResult(b.ctx, err)
	if err != nil {
		return now, false
	}
	b.mu.Lock()
	b.published, b.pubPools = d, rec.poolCount()
	b.recomputeLocked()
	b.broadcastLocked()
	b.mu.Unlock()
	return now, false
}

// deleteGivenBack deletes the slot keys trimLocked marked.
func (b *Budget) deleteGivenBack() {
	b.mu.Lock()
	var ks []int
	for k, o := range b.owned {
		if o.deleting {
			ks = append(ks, k)
		}
	}
	b.mu.Unlock()
	for _, k := range ks {
		rev, err := b.deleteSlot(b.ctx, k)
		if err != nil {
			return // etcd is away; the next tick tries again
		}
		b.mu.Lock()
		if o := b.owned[k]; o != nil && o.deleting {
			delete(b.owned, k)
		}
		b.localRev = max(b.localRev, rev)
		b.broadcastLocked()
		b.mu.Unlock()
	}
}

// cover backs permits that have no slot key (granted before the first
// join, or whose key was lost) with the key of their own number, an idle
// one of ours or a free one, within the share. Until all are covered the pool's share is capped at
// the keys owned, so the surplus connections close as they are released.
func (b *Budget) cover() {
	for range 8 { // a few per tick; etcd answers each in turn
		b.mu.Lock()
		var p *permit
		for q := range b.permits {
			if q.cover < 0 {
				p = q
				break
			}
		}
		if p == nil {
			b.overBudget = false
		}
		if p == nil || !b.onlineLocked(time.Now()) {
			b.mu.Unlock()
			return
		}
		// Only the key of the permit's own number: its connection holds
		// that number's lock at the server, and a key of another number
		// would leave this one free in etcd while its lock is taken, so
		// that every other member's dial with it is refused by the fence
		// for as long as the connection lives.
		if o := b.owned[p.slot]; o != nil && o.permit == nil && !o.deleting {
			o.permit, p.cover = p, p.slot
			b.mu.Unlock()
			continue
		}
		if b.coveredLocked()+len(b.pending) >= b.share {
			b.mu.Unlock()
			return
		}
		k, ok := b.freeSlotLocked(p.slot, nil)
		if !ok || k != p.slot {
			// Another member has this number now: this connection must
			// go, and no other, as soon as nobody holds it.
			b.overBudget = true
			revoke := p.revoke
			b.mu.Unlock()
			if revoke != nil {
				revoke()
			}
			return
		}
		b.pending[k] = true
		lease := b.lease
		b.mu.Unlock()
		rev, err := b.createSlot(b.ctx, lease, k)
		b.mu.Lock()
		delete(b.pending, k)
		if rev > 0 {
			b.localRev = max(b.localRev, rev)
			o := &ownedSlot{rev: rev}
			b.owned[k] = o
			if _, out := b.permits[p]; out && p.cover < 0 {
				o.permit, p.cover = p, k
			}
			b.trimLocked()
		}
		b.broadcastLocked()
		b.mu.Unlock()
		if err != nil || rev == 0 {
			return
		}
	}
}

// straighten moves a permit backed by another number's key (its own was
// taken when it was re-taken) onto its own number's key once that is free,
// so the number is not left unusable: no permit may be granted on a
// number one of ours uses, and the key freed from the swap can be lent.
func (b *Budget) straighten() {
	b.mu.Lock()
	var p *permit
	for q := range b.permits {
		if q.cover >= 0 && q.cover != q.slot {
			if _, taken := b.view.slots[q.slot]; !taken && b.owned[q.slot] == nil && !b.pending[q.slot] {
				p = q
				break
			}
		}
	}
	if p == nil || !b.onlineLocked(time.Now()) || b.coveredLocked()+len(b.pending) >= b.share {
		b.mu.Unlock()
		return
	}
	k, lease := p.slot, b.lease
	b.pending[k] = true
	b.mu.Unlock()
	rev, _ := b.createSlot(b.ctx, lease, k)
	b.mu.Lock()
	defer b.mu.Unlock()
	delete(b.pending, k)
	if rev == 0 {
		return
	}
	b.localRev = max(b.localRev, rev)
	o := &ownedSlot{rev: rev}
	b.owned[k] = o
	if _, out := b.permits[p]; out && p.cover >= 0 && p.cover != k {
		if old := b.owned[p.cover]; old != nil && old.permit == p {
			old.permit = nil
		}
		o.permit, p.cover = p, k
	}
	b.trimLocked()
	b.broadcastLocked()
}

// idleKeyLocked returns an idle slot key of ours that may be lent.
func (b *Budget) idleKeyLocked() (int, bool) {
	now := time.Now()
	for k, o := range b.owned {
		if o.permit == nil && !o.deleting && !b.avoidedLocked(k, now) {
			return k, true
		}
	}
	return 0, false
}
