package shoaletcd

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/shoalpool/shoal/internal/fairshare"
	"go.etcd.io/etcd/api/v3/mvccpb"
	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// session is one lease and what join read with it.
type session struct {
	lease clientv3.LeaseID
	rev   int64              // revision of kvs
	kvs   []*mvccpb.KeyValue // the whole budget at rev
}

// join takes a lease, checks the budget's size, registers this member and
// re-takes, under the new lease, the slot keys of the permits it has out
// (moving them from the old lease, or creating them again if they were
// lost and are free). rejoin skips the check of the minimums: a member
// that was in the budget before keeps its place, and fairshare.Divide copes.
//
// A join that fails keeps its lease for the next attempt (see joinLease)
// rather than revoke it: it may have moved keys to it, and those count
// connections the member still holds, which a revocation would free for
// other members to take.
//
// The lease is kept alive in the background from its grant (see
// keepJoinAlive): each of the join's requests is bounded by half the TTL,
// but not their sum (one move per slot key), nor the wait between attempts.
func (b *Budget) join(ctx context.Context, rejoin bool) (*session, error) {
	name := b.opts.Name
	lease, err := b.joinLease(ctx)
	if err != nil {
		return nil, err
	}
	stop := b.keepJoinAlive(lease)
	done := false
	defer func() {
		if done {
			stop() // serve keeps it alive from here
			return
		}
		b.mu.Lock()
		b.joining = lease
		b.mu.Unlock()
	}()
	if err := b.ensureSize(ctx); err != nil {
		return nil, err
	}
	if err := b.register(ctx, lease, rejoin); err != nil {
		return nil, err
	}
	if err := b.retake(ctx, lease); err != nil {
		return nil, err
	}

	c, cancel := context.WithTimeout(ctx, b.opts.opTimeout())
	r, err := b.client.Get(c, b.keys.root, clientv3.WithPrefix())
	cancel()
	b.noteResult(ctx, err)
	if err != nil {
		return nil, fmt.Errorf("shoaletcd: budget %q: reading the budget: %w", name, err)
	}

	b.mu.Lock()
	old := b.lease
	b.lease, b.session, b.joined, b.joining = lease, true, true, 0
	b.contactLocked(true)
	b.mu.Unlock()
	if old != 0 && old != lease {
		// Whatever the old lease still holds was not re-taken: let it go
		// now rather than at its expiry.
		b.retire(old)
	}
	done = true
	return &session{lease: lease, rev: r.Header.Revision, kvs: r.Kvs}, nil
}

// joinLease returns the lease for a join: the one an earlier attempt that
// failed kept, renewed, while etcd still has it, or else a new one. The
// kept lease holds whatever keys that attempt moved or created; once it
// has expired they are gone with it, and retake creates them again if
// they are free.
func (b *Budget) joinLease(ctx context.Context) (clientv3.LeaseID, error) {
	b.mu.Lock()
	kept := b.joining
	b.mu.Unlock()
	if kept != 0 {
		c, cancel := context.WithTimeout(ctx, b.opts.opTimeout())
		_, err := b.client.KeepAliveOnce(c, kept)
		cancel()
		if err == nil {
			b.noteResult(ctx, nil)
			return kept, nil
		}
		if !errors.Is(err, rpctypes.ErrLeaseNotFound) {
			b.noteResult(ctx, err)
			return 0, fmt.Errorf("shoaletcd: budget %q: renewing the lease of an attempt to join: %w", b.opts.Name, err)
		}
		b.mu.Lock()
		b.joining = 0
		b.mu.Unlock()
	}
	c, cancel := context.WithTimeout(ctx, b.opts.opTimeout())
	g, err := b.client.Grant(c, b.opts.ttlSeconds())
	cancel()
	b.noteResult(ctx, err)
	if err != nil {
		return 0, fmt.Errorf("shoaletcd: budget %q: granting a lease: %w", b.opts.Name, err)
	}
	return g.ID, nil
}

// keepJoinAlive keeps lease, a join's, alive until the returned func is
// called, the next attempt to join starts, or the budget closes; this
// sends no request of its own for Close to wait on. The responses are
// drained, as the client drops and complains of those left unread.
func (b *Budget) keepJoinAlive(lease clientv3.LeaseID) context.CancelFunc {
	ctx, cancel := context.WithCancel(b.ctx)
	b.mu.Lock()
	if b.joinAlive != nil {
		b.joinAlive()
	}
	b.joinAlive = cancel
	b.mu.Unlock()
	if ka, err := b.client.KeepAlive(ctx, lease); err == nil {
		go func() {
			for range ka {
			}
		}()
	}
	return cancel
}

// ensureSize creates the size key if it is missing and checks it against
// Options.Size. A differing size is replaced only when no member is alive
// (so a budget can be resized by restarting every member with the new
// Size); otherwise it is ErrSizeMismatch.
func (b *Budget) ensureSize(ctx context.Context) error {
	size := strconv.Itoa(b.opts.Size)
	c, cancel := context.WithTimeout(ctx, b.opts.opTimeout())
	defer cancel()
	r, err := b.client.Txn(c).
		If(clientv3.Compare(clientv3.CreateRevision(b.keys.size()), "=", 0)).
		Then(clientv3.OpPut(b.keys.size(), size)).
		Else(clientv3.OpGet(b.keys.size())).
		Commit()
	b.noteResult(ctx, err)
	if err != nil {
		return fmt.Errorf("shoaletcd: budget %q: checking its size: %w", b.opts.Name, err)
	}
	if r.Succeeded {
		return nil
	}
	kvs := r.Responses[0].GetResponseRange().Kvs
	if len(kvs) == 0 {
		return fmt.Errorf("shoaletcd: budget %q: its size key vanished while being checked", b.opts.Name)
	}
	stored := string(kvs[0].Value)
	if stored == size {
		return nil
	}
	// An empty range compares as a key that does not exist, so this holds
	// exactly when no member record is left.
	r, err = b.client.Txn(c).
		If(clientv3.Compare(clientv3.Value(b.keys.size()), "=", stored),
			clientv3.Compare(clientv3.CreateRevision(b.keys.members()), "=", 0).WithPrefix()).
		Then(clientv3.OpPut(b.keys.size(), size)).
		Commit()
	b.noteResult(ctx, err)
	if err != nil {
		return fmt.Errorf("shoaletcd: budget %q: replacing its size: %w", b.opts.Name, err)
	}
	if !r.Succeeded {
		return fmt.Errorf("%w: budget %q has size %s in etcd (%s) while members are alive, and this member has Size %d; every member must use the same Size",
			ErrSizeMismatch, b.opts.Name, stored, b.keys.size(), b.opts.Size)
	}
	b.log.Info("shoaletcd: budget resized; no member was alive", "from", stored, "to", b.opts.Size)
	return nil
}

// register writes this member's record under lease, in a transaction that
// fails if a member record was created since the minimums were summed, so
// two members joining at once cannot both squeeze in over the size.
func (b *Budget) register(ctx context.Context, lease clientv3.LeaseID, rejoin bool) error {
	if pools := b.poolsNow(); len(pools) > 0 {
		d := min(fairshare.Sum(b.demandOf(pools)), b.opts.Size)
		b.mu.Lock()
		b.published = d
		b.mu.Unlock()
	}
	for range 20 {
		c, cancel := context.WithTimeout(ctx, b.opts.opTimeout())
		g, err := b.client.Get(c, b.keys.members(), clientv3.WithPrefix())
		b.noteResult(ctx, err)
		if err != nil {
			cancel()
			return fmt.Errorf("shoaletcd: budget %q: reading its members: %w", b.opts.Name, err)
		}
		sum, others := b.opts.Min, 0
		for _, kv := range g.Kvs {
			id, ok := b.keys.memberOf(string(kv.Key))
			var r memberRecord
			if !ok || id == b.id || json.Unmarshal(kv.Value, &r) != nil {
				continue
			}
			sum += r.Min
			others++
		}
		if sum > b.opts.Size {
			err := fmt.Errorf("%w: budget %q: the minimums sum to %d (this member's Min %d plus %d from %d other member(s)), above its size %d",
				ErrMinimums, b.opts.Name, sum, b.opts.Min, sum-b.opts.Min, others, b.opts.Size)
			if !rejoin {
				cancel()
				return err
			}
			b.log.Warn("shoaletcd: rejoining although the minimums no longer fit; they are granted in member ID order", "err", err)
		}
		b.mu.Lock()
		record := b.recordLocked()
		b.pubPools = record.poolCount()
		rec, _ := json.Marshal(record)
		b.mu.Unlock()
		t, err := b.client.Txn(c).
			If(clientv3.Compare(clientv3.CreateRevision(b.keys.members()), "<", g.Header.Revision+1).WithPrefix(),
				clientv3.Compare(clientv3.Value(b.keys.size()), "=", strconv.Itoa(b.opts.Size))).
			Then(clientv3.OpPut(b.keys.member(b.id), string(rec), clientv3.WithLease(lease))).
			Commit()
		cancel()
		b.noteResult(ctx, err)
		if err != nil {
			return fmt.Errorf("shoaletcd: budget %q: registering this member: %w", b.opts.Name, err)
		}
		if t.Succeeded {
			return nil
		}
	}
	return fmt.Errorf("shoaletcd: budget %q: could not register this member: members kept joining (or the size changed) during 20 attempts", b.opts.Name)
}

// retake gives every permit out a slot key under lease before the member
// counts as joined, so the pool's share does not dip (and no connection
// closes) on the way: a key it held under the old lease is moved, one that
// was lost is created again if free, and a permit granted on Min before
// the first join gets its own number's key. A permit whose number another
// member took meanwhile is revoked (its connection closes when idle or
// released: it holds that number's fence lock) and makes the member over
// budget: its share stays at the keys it owns until it has closed. Idle keys are not carried over;
// the old lease's revocation frees them.
func (b *Budget) retake(ctx context.Context, lease clientv3.LeaseID) error {
	c, cancel := context.WithTimeout(ctx, b.opts.opTimeout())
	r, err := b.client.Get(c, b.keys.slots(), clientv3.WithPrefix())
	cancel()
	b.noteResult(ctx, err)
	if err != nil {
		return fmt.Errorf("shoaletcd: budget %q: reading its slots: %w", b.opts.Name, err)
	}
	taken := map[int]string{}
	for _, kv := range r.Kvs {
		if k, ok := b.keys.slotOf(string(kv.Key)); ok {
			taken[k] = string(kv.Value)
		}
	}

	b.mu.Lock()
	// Until the member counts as joined, a connection that closes is
	// replaced by a local permit; it must not take a number another
	// member holds, or it would be revoked as soon as it is covered.
	now := time.Now()
	for k, id := range taken {
		if id != b.id {
			b.avoid[k] = now.Add(b.avoidFor())
		}
	}
	var lent []int
	for k, o := range b.owned {
		if o.permit == nil {
			delete(b.owned, k)
		} else {
			lent = append(lent, k)
		}
	}
	var bare []*permit
	for p := range b.permits {
		if p.cover < 0 {
			bare = append(bare, p)
		}
	}
	b.mu.Unlock()

	for _, k := range lent {
		rev, err := b.retakeSlot(ctx, lease, k, taken[k])
		if err != nil {
			return fmt.Errorf("shoaletcd: budget %q: re-taking slot %d: %w", b.opts.Name, k, err)
		}
		b.mu.Lock()
		if o := b.owned[k]; o != nil && rev > 0 {
			o.rev = rev
			b.localRev = max(b.localRev, rev)
			taken[k] = b.id
		} else if o != nil {
			if o.permit != nil {
				o.permit.cover = -1
				bare = append(bare, o.permit)
			}
			delete(b.owned, k)
		}
		if rev == 0 {
			taken[k] = "?" // another member's, whatever the read showed
		}
		b.mu.Unlock()
	}

	for _, p := range bare {
		for {
			// Only the key of the permit's own number (see cover): if
			// another member holds it, this connection must go.
			b.mu.Lock()
			k, ok := p.slot, taken[p.slot] == ""
			if !ok {
				b.overBudget = true
				revoke := p.revoke
				b.mu.Unlock()
				b.log.Warn("shoaletcd: the slot of a connection held through the outage is another member's now; closing that connection when it is released", "slot", p.slot)
				if revoke != nil {
					revoke()
				}
				break
			}
			b.mu.Unlock()
			rev, err := b.createSlot(ctx, lease, k)
			if err != nil {
				return fmt.Errorf("shoaletcd: budget %q: taking slot %d: %w", b.opts.Name, k, err)
			}
			taken[k] = "?"
			if rev == 0 {
				continue
			}
			taken[k] = b.id
			b.mu.Lock()
			o := &ownedSlot{rev: rev}
			b.owned[k] = o
			b.localRev = max(b.localRev, rev)
			if _, out := b.permits[p]; out && p.cover < 0 {
				o.permit, p.cover = p, k
			}
			b.mu.Unlock()
			break
		}
	}
	return nil
}

// retakeSlot puts slot key k, which the read before showed held by holder
// ("" for no one), under lease: a key of ours is moved, a free one created.
// A key read as ours may be gone since, with the old lease (etcd revokes a
// lease that expired while it was stopped up to half a second after it
// resumes); it is then created again, as one lost earlier would be, rather
// than taken for another member's and its connection closed. It returns
// the revision of the write, or 0 when another member holds k.
func (b *Budget) retakeSlot(ctx context.Context, lease clientv3.LeaseID, k int, holder string) (int64, error) {
	switch holder {
	case b.id:
		rev, err := b.moveSlot(ctx, lease, k)
		if err != nil || rev > 0 {
			return rev, err
		}
		return b.createSlot(ctx, lease, k)
	case "":
		return b.createSlot(ctx, lease, k)
	}
	return 0, nil
}

// retire revokes lease, which the member has left for a new one, best
// effort (it expires within its TTL anyway). Close cuts the request short
// and then revokes the lease itself, so that closing waits on one
// request's bound for all its leases.
func (b *Budget) retire(lease clientv3.LeaseID) {
	b.mu.Lock()
	b.retiring = lease
	b.mu.Unlock()
	c, cancel := context.WithTimeout(b.ctx, b.opts.opTimeout())
	_, _ = b.client.Revoke(c, lease)
	cancel()
	if b.ctx.Err() == nil {
		b.mu.Lock()
		b.retiring = 0
		b.mu.Unlock()
	}
}

// revoke revokes lease, best effort: if etcd does not answer, the lease
// expires within its TTL anyway.
func (b *Budget) revoke(lease clientv3.LeaseID) {
	c, cancel := context.WithTimeout(context.Background(), b.opts.opTimeout())
	defer cancel()
	_, _ = b.client.Revoke(c, lease)
}
