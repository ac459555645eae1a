package shoaletcd

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// A rejoin against an etcd slow enough that its requests, each within its
// bound, take longer than the TTL between them must keep its new lease
// alive meanwhile: the keys it moved there count connections the member
// holds, and with that lease expired another member could take them while
// those connections stay open.
//
// Four of the rejoin's requests (its reads of the members and of the
// slots, its first move of a key, its last read) are each held until etcd
// reports the new lease's remaining TTL, in whole seconds, other than it
// did when the request was sent: a second of the lease's time at most, a
// second of the request's bound of two. Unrenewed, the lease then ends
// during the last read, after the keys were moved to it; right then
// another member tries to create each of those keys.
func TestSlowRejoinKeepsItsLease(t *testing.T) {
	addr := etcdAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	watchSlots(t, admin, prefix, "db", 10)
	c := newClient(t, addr)
	ka := &cutLease{Lease: c.Lease}
	grants := &grantLog{Lease: ka}
	kv := &faultKV{KV: c.KV}
	c.Lease, c.KV = grants, kv
	opts := Options{Name: "db", Size: 10, TTL: 4 * time.Second, Prefix: prefix, Logger: testLogger(t)}
	b, err := New(context.Background(), c, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	f := newFakePool(t, b, 5)
	eventually(t, 5*time.Second, "5 permits, each on its own slot key", func() (bool, string) {
		return f.holding() == 5 && coveredOwn(b) == 5, debugState(b)
	})

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	other, err := admin.Grant(ctx, 20)
	if err != nil {
		t.Fatal(err)
	}
	old, held := heldNow(b)
	k := newKeys(prefix, "db")
	// A hold ends short of the request's bound, or the request would fail
	// for the hold's sake rather than the lease's.
	var late atomic.Int32
	hold := func() {
		if !waitTTLChange(admin, clientv3.LeaseID(grants.last.Load()), opts.opTimeout()-300*time.Millisecond) {
			late.Add(1)
		}
	}
	st, steal := stealer(ctx, admin, k, other.ID, held)
	kv.before(k.members(), func() {
		hold()
		kv.before(k.slots(), func() {
			hold()
			kv.beforeCommit(k.slots(), func(string) {
				hold()
				kv.before(k.root, func() {
					hold()
					steal()
				})
			})
		})
	})
	ka.cut(old)
	st.wait(t, b, "the rejoin did not reach its last read")
	if n := late.Load(); n > 0 {
		t.Fatalf("%d of the rejoin's held requests saw no change in its lease's TTL within their bound; the test needs one a second", n)
	}
	rejoinedFrom(t, b, old, 15*time.Second)
	if len(st.taken) > 0 || f.asked.Load() > 0 {
		t.Fatalf("after a rejoin whose requests took longer than the TTL between them, another member took the keys of slots %v and %d connections held through it were revoked; want none of either",
			st.taken, f.asked.Load())
	}
}

// The lease an attempt to rejoin kept, after it failed past moving the
// member's keys there, stays alive until the next attempt, however long
// the wait between them: at the smallest TTL, 2s, that wait reaches the
// TTL after four attempts in a row have failed. Before the fifth reads
// the slots, another member tries to create each of the keys.
func TestRejoinKeepsItsLeaseBetweenAttempts(t *testing.T) {
	addr := etcdAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	watchSlots(t, admin, prefix, "db", 10)
	c := newClient(t, addr)
	ka := &cutLease{Lease: c.Lease}
	kv := &faultKV{KV: c.KV}
	c.Lease, c.KV = ka, kv
	b, err := New(context.Background(), c, Options{Name: "db", Size: 10, TTL: 2 * time.Second, Prefix: prefix, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	f := newFakePool(t, b, 5)
	eventually(t, 5*time.Second, "5 permits, each on its own slot key", func() (bool, string) {
		return f.holding() == 5 && coveredOwn(b) == 5, debugState(b)
	})

	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	other, err := admin.Grant(ctx, 20)
	if err != nil {
		t.Fatal(err)
	}
	old, held := heldNow(b)
	k := newKeys(prefix, "db")
	st, steal := stealer(ctx, admin, k, other.ID, held)
	// Each of the first four attempts fails at its last read, after its
	// moves; the fifth is held before its read of the slots.
	var failAt func(n int)
	failAt = func(n int) {
		kv.fail(k.root, func() {
			if n < 4 {
				failAt(n + 1)
			} else {
				kv.before(k.slots(), steal)
			}
		})
	}
	failAt(1)
	ka.cut(old)
	st.wait(t, b, "the rejoin did not fail four times and try again")
	rejoinedFrom(t, b, old, 10*time.Second)
	if len(st.taken) > 0 || f.asked.Load() > 0 {
		t.Fatalf("after four attempts to rejoin failed past moving their keys, another member took the keys of slots %v and %d connections held through it were revoked; want none of either",
			st.taken, f.asked.Load())
	}
}

// waitTTLChange waits until etcd reports lease's remaining TTL, in whole
// seconds, other than it did at the call (a second went by, the lease was
// renewed, or it is gone), for at most bound; it reports whether it saw
// the change.
func waitTTLChange(c *clientv3.Client, lease clientv3.LeaseID, bound time.Duration) bool {
	ctx, cancel := context.WithTimeout(context.Background(), bound)
	defer cancel()
	first, seen := int64(0), false
	for ctx.Err() == nil {
		r, err := c.TimeToLive(ctx, lease)
		if err == nil {
			if seen && r.TTL != first {
				return true
			}
			if !seen {
				first, seen = r.TTL, true
			}
		}
		select {
		case <-ctx.Done():
		case <-time.After(10 * time.Millisecond):
		}
	}
	return false
}

// grantLog is a client's Lease that remembers the last lease it granted.
type grantLog struct {
	clientv3.Lease
	last atomic.Int64
}

func (l *grantLog) Grant(ctx context.Context, ttl int64) (*clientv3.LeaseGrantResponse, error) {
	r, err := l.Lease.Grant(ctx, ttl)
	if err == nil {
		l.last.Store(int64(r.ID))
	}
	return r, err
}
