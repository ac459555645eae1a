package shoaletcd

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"go.etcd.io/etcd/api/v3/v3rpc/rpctypes"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A permit is the ownership of one slot key, NAME/slots/I with I in
// [0, Size). A key is created only by a transaction that requires it not
// to exist, so etcd never holds more than Size of them whatever the
// members believe their shares are: a member grows only into free keys,
// which others free as their connections close.

// freeSlotLocked picks a slot key to create: one no member holds as far as
// the view shows, that this member is not creating, has not fenced lately,
// and whose number none of its permits out uses (so two of its own
// connections never share a number). prefer, the number of the permit
// being covered (or -1), is taken when it qualifies, its one user being
// that permit; else a random one, so members racing for keys seldom pick
// the same. skip lists keys already lost in this round.
func (b *Budget) freeSlotLocked(prefer int, skip map[int]bool) (int, bool) {
	now := time.Now()
	ok := func(k, users int) bool {
		_, taken := b.view.slots[k]
		return k >= 0 && k < b.opts.Size && !taken && b.owned[k] == nil && !b.pending[k] &&
			b.slotUsers[k] <= users && !skip[k] && !b.avoidedLocked(k, now)
	}
	if ok(prefer, 1) {
		return prefer, true
	}
	var free []int
	for k := range b.opts.Size {
		if ok(k, 0) {
			free = append(free, k)
		}
	}
	if len(free) == 0 {
		return 0, false
	}
	return free[rand.IntN(len(free))], true
}

// localSlotLocked picks the number of a permit granted before the member
// joined etcd: the highest one not in use here and not fenced. Members
// online pick at random, so from the top a collision is unlikely, and
// shoalpgx's fence catches one that happens.
func (b *Budget) localSlotLocked() (int, bool) {
	now := time.Now()
	for k := b.opts.Size - 1; k >= 0; k-- {
		if b.slotUsers[k] == 0 && !b.avoidedLocked(k, now) {
			return k, true
		}
	}
	return 0, false
}

// createSlot creates slot key k under lease if no one holds it. It returns
// the revision of the write, or 0 when someone else holds k.
func (b *Budget) createSlot(ctx context.Context, lease clientv3.LeaseID, k int) (int64, error) {
	key := b.keys.slot(k)
	return b.slotTxn(ctx, clientv3.Compare(clientv3.CreateRevision(key), "=", 0),
		clientv3.OpPut(key, b.id, clientv3.WithLease(lease)))
}

// moveSlot puts slot key k, which this member held under an older lease,
// under lease. It returns the revision of the write, or 0 when the key is
// no longer this member's.
func (b *Budget) moveSlot(ctx context.Context, lease clientv3.LeaseID, k int) (int64, error) {
	key := b.keys.slot(k)
	return b.slotTxn(ctx, clientv3.Compare(clientv3.Value(key), "=", b.id),
		clientv3.OpPut(key, b.id, clientv3.WithLease(lease)))
}

// deleteSlot deletes slot key k if it is still this member's, and returns
// the revision of the deletion, or 0 if it was not (nothing to wait for in
// the watch).
func (b *Budget) deleteSlot(ctx context.Context, k int) (int64, error) {
	key := b.keys.slot(k)
	return b.slotTxn(ctx, clientv3.Compare(clientv3.Value(key), "=", b.id), clientv3.OpDelete(key))
}

// slotTxn runs op if cmp holds, within the budget's request timeout, and
// returns the revision of the write, or 0 when cmp did not hold.
func (b *Budget) slotTxn(ctx context.Context, cmp clientv3.Cmp, op clientv3.Op) (int64, error) {
	c, cancel := context.WithTimeout(ctx, b.opts.opTimeout())
	defer cancel()
	r, err := b.client.Txn(c).If(cmp).Then(op).Commit()
	b.noteResult(ctx, err)
	if err != nil || !r.Succeeded {
		return 0, err
	}
	return r.Header.Revision, nil
}

// noteResult records whether a request to etcd succeeded. A missing lease
// counts as a failure: the session is gone, the keep-alive channel closes
// soon after, and the run loop rejoins; until then nothing grows. A
// request cut short by its caller's ctx (parent) says nothing of etcd.
func (b *Budget) noteResult(parent context.Context, err error) {
	if err != nil && parent.Err() != nil {
		return
	}
	b.mu.Lock()
	b.contactLocked(err == nil)
	if errors.Is(err, rpctypes.ErrLeaseNotFound) {
		b.lastContact = time.Time{}
	}
	b.mu.Unlock()
}
