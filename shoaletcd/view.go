package shoaletcd

import (
	"encoding/json"
	"strconv"

	"github.com/shoalpool/shoal/internal/fairshare"
	"go.etcd.io/etcd/api/v3/mvccpb"
)

// view is the budget as etcd showed it at revision rev: the members'
// records and the slot keys' owners.
type view struct {
	rev     int64
	size    int // 0 when the size key is missing
	members map[string]memberRecord
	slots   map[int]slotOwner
}

// slotOwner is who holds a slot key, and under which lease.
type slotOwner struct {
	id    string
	lease int64
}

// reset starts the view again from a full read at rev.
func (v *view) reset(k keys, kvs []*mvccpb.KeyValue, rev int64) {
	v.rev, v.size = rev, 0
	v.members = map[string]memberRecord{}
	v.slots = map[int]slotOwner{}
	for _, kv := range kvs {
		v.put(k, kv)
	}
}

// put applies one key's new value.
func (v *view) put(k keys, kv *mvccpb.KeyValue) {
	key := string(kv.Key)
	if i, ok := k.slotOf(key); ok {
		v.slots[i] = slotOwner{id: string(kv.Value), lease: kv.Lease}
		return
	}
	if id, ok := k.memberOf(key); ok {
		var r memberRecord
		if json.Unmarshal(kv.Value, &r) == nil {
			v.members[id] = r
		}
		return
	}
	if key == k.size() {
		v.size, _ = strconv.Atoi(string(kv.Value))
	}
}

// del applies one key's deletion.
func (v *view) del(k keys, key string) {
	if i, ok := k.slotOf(key); ok {
		delete(v.slots, i)
	} else if id, ok := k.memberOf(key); ok {
		delete(v.members, id)
	} else if key == k.size() {
		v.size = 0
	}
}

// claims lists the members' claims for fairshare.Divide. self is included even
// when the watch has not shown its record yet, so a new member counts
// itself from the start.
func (v *view) claims(selfID string, self memberRecord, haveSelf bool) []fairshare.Claim {
	cs := make([]fairshare.Claim, 0, len(v.members)+1)
	for id, r := range v.members {
		if id == selfID && haveSelf {
			r = self
		}
		cs = append(cs, fairshare.Claim{ID: id, Min: r.Min, Demand: r.Demand})
	}
	if _, ok := v.members[selfID]; !ok && haveSelf {
		cs = append(cs, fairshare.Claim{ID: selfID, Min: self.Min, Demand: self.Demand})
	}
	return cs
}

// recomputeLocked sets this member's fair share from the view and gives
// back idle keys above it. It returns whether the share changed.
func (b *Budget) recomputeLocked() bool {
	self := b.recordLocked()
	cs := b.view.claims(b.id, self, b.session && !b.left)
	shares := fairshare.Divide(b.opts.Size, cs)
	share := 0
	for i, c := range cs {
		if c.ID == b.id {
			share = shares[i]
		}
	}
	changed := share != b.share
	b.share = share
	b.trimLocked()
	return changed
}

// recordLocked is this member's record as it publishes it.
func (b *Budget) recordLocked() memberRecord {
	pools := len(b.pools)
	return memberRecord{Host: b.host, PID: b.pid, Label: b.opts.Label, Min: b.opts.Min, Demand: b.published, Pools: &pools}
}

// reconcileLocked brings the slots this member believes it owns in line
// with the view, once the view has caught up with the member's own writes
// (a key it just created or deleted would otherwise look lost or found):
//
//   - a key the view shows as ours, under our lease, that we do not track
//     (a create whose answer was lost) is adopted as idle, then trimmed;
//   - a key we track that the view shows gone or someone else's was lost
//     (our lease expired while we were away): its permit, if any, is left
//     without a key and the run loop looks for another.
func (b *Budget) reconcileLocked() {
	if !b.session || b.view.rev < b.localRev || len(b.pending) > 0 {
		return
	}
	for k, s := range b.view.slots {
		if s.id == b.id && s.lease == int64(b.lease) && b.owned[k] == nil {
			b.owned[k] = &ownedSlot{rev: b.view.rev}
		}
	}
	for k, o := range b.owned {
		if o.deleting || b.view.rev < o.rev {
			continue
		}
		if s, ok := b.view.slots[k]; ok && s.id == b.id {
			continue
		}
		if o.permit != nil {
			o.permit.cover = -1
			b.log.Warn("shoaletcd: slot key lost (lease expired?); looking for another for its connection", "slot", k)
		}
		delete(b.owned, k)
	}
	b.trimLocked()
}
