package shoaletcd

import (
	clientv3 "go.etcd.io/etcd/client/v3"
)

// A slot key deleted by its holder is a connection closed, or a slot the
// fence refused. A slot key that vanished with its holder's lease (the
// holder was killed, or paused past its TTL, or its lease was revoked) may
// still have a live connection behind it, held by a process that will wake
// up. Such a slot is suspect until a connection of this member has held it
// (a permit on it released without being fenced), and a permit on it says
// so (Suspect), so that shoalpgx looks in pg_locks before it dials with it
// instead of relying on the lock it takes after connecting: a refused slot
// then costs no connection at the server.

// noteVanishedLocked marks the slots in events whose keys were deleted in
// the same revision as their holder's member record (a lease's end deletes
// all its keys at once).
func (b *Budget) noteVanishedLocked(events []*clientv3.Event) {
	gone := map[int64]map[string]bool{} // revision -> members deleted in it
	for _, ev := range events {
		if ev.Type != clientv3.EventTypeDelete {
			continue
		}
		if id, ok := b.keys.memberOf(string(ev.Kv.Key)); ok {
			if gone[ev.Kv.ModRevision] == nil {
				gone[ev.Kv.ModRevision] = map[string]bool{}
			}
			gone[ev.Kv.ModRevision][id] = true
		}
	}
	for _, ev := range events {
		if ev.Type != clientv3.EventTypeDelete {
			continue
		}
		k, ok := b.keys.slotOf(string(ev.Kv.Key))
		if !ok {
			continue
		}
		// A key deleted alone does not clear it: the member that deletes a
		// fenced slot's key is alive, and the stale connection is still
		// there. Only a connection of ours that held the slot clears it
		// (permit.Release).
		if owner, known := b.view.slots[k]; known && gone[ev.Kv.ModRevision][owner.id] {
			b.suspect[k] = true
		}
	}
}

// noteResyncedLocked marks, after the budget was read again because the
// watch broke (etcd away, most often), every slot then free as suspect.
// How the missing keys went was not seen, and after an outage long enough
// to end leases every member rejoins and covers its open connections'
// slots again, one after the other: until it has, a free slot may have a
// live connection behind it.
func (b *Budget) noteResyncedLocked() {
	for k := range b.opts.Size {
		if _, held := b.view.slots[k]; !held {
			b.suspect[k] = true
		}
	}
}

// Suspect reports whether the permit's slot was last held by a member
// whose lease ended with the slot still held, so that a connection of
// that member may still hold the slot's lock at the server. shoalpgx calls
// it through interface{ Suspect() bool } and, when it is true, checks the
// server before it dials.
func (p *permit) Suspect() bool { return p.suspect }
