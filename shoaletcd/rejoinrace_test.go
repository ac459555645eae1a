package shoaletcd

import (
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// A slot key whose creation was under way when the member's lease was
// lost is written under the old lease, which the rejoin, having read the
// slots before it landed, does not carry over and then revokes. No permit
// may be granted on it: its connection would be counted by no key once
// the old lease goes, and another member could take the slot.
func TestCreateUnderWayWhenLeaseIsLost(t *testing.T) {
	var hl *hookLease
	m := newRejoinMember(t, rejoinSetup{permits: 2, lease: func(l clientv3.Lease) clientv3.Lease {
		hl = &hookLease{Lease: l}
		return hl
	}})
	admin, k, ka, kv, b := m.admin, m.k, m.ka, m.kv, m.b
	ctx, other := m.otherMember(t, 10*time.Second)
	b.mu.Lock()
	old := b.lease
	b.mu.Unlock()

	// An Acquire's creation of a key is held back until the rejoin has
	// read the slots and moved the keys it knew of.
	creating, release := make(chan string, 1), make(chan struct{})
	kv.beforeCommit(k.slots(), func(key string) {
		creating <- key
		<-release
	})
	type acquired struct {
		p   *permit
		err error
	}
	got := make(chan acquired, 1)
	go func() {
		p, err := b.Acquire(ctx)
		pp, _ := p.(*permit)
		got <- acquired{pp, err}
	}()
	var key string
	select {
	case key = <-creating:
	case <-ctx.Done():
		t.Fatalf("Acquire did not create a key: %s", debugState(b))
	}
	kv.before(k.root, func() {
		close(release)
		for range 250 { // until the creation has landed, at most 5s
			b.mu.Lock()
			n := len(b.pending)
			b.mu.Unlock()
			if n == 0 {
				return
			}
			time.Sleep(20 * time.Millisecond)
		}
	})
	// Once the rejoin has revoked the old lease, another member creates
	// the key if it is free.
	tried := make(chan error, 1)
	hl.armAfterRevoke(func(id clientv3.LeaseID) {
		_, err := admin.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
			Then(clientv3.OpPut(key, "other", clientv3.WithLease(other))).Commit()
		tried <- err
	})
	ka.cut(old)
	select {
	case err := <-tried:
		if err != nil {
			t.Fatal(err)
		}
	case <-ctx.Done():
		t.Fatalf("the member did not rejoin: %s", debugState(b))
	}
	var a acquired
	select {
	case a = <-got:
	case <-ctx.Done():
		t.Fatalf("Acquire did not return after the rejoin: %s", debugState(b))
	}
	if a.err != nil {
		t.Fatalf("Acquire: %v", a.err)
	}
	defer a.p.Release()
	b.mu.Lock()
	lease := b.lease
	b.mu.Unlock()
	r, err := admin.Get(ctx, k.slot(a.p.slot))
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Kvs) != 1 || string(r.Kvs[0].Value) != b.ID() || r.Kvs[0].Lease != int64(lease) {
		var held string
		if len(r.Kvs) == 1 {
			held = fmt.Sprintf("%s under lease %x", r.Kvs[0].Value, r.Kvs[0].Lease)
		}
		t.Errorf("the permit Acquire returned is on slot %d, whose key is %q, want this member's under its lease %x (the key being created when the lease was lost was %s)",
			a.p.slot, held, int64(lease), key)
	}
}
