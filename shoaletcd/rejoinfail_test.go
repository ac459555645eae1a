package shoaletcd

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// A rejoin that fails after it moved the member's slot keys to its new
// lease (here the read that ends the join fails) must leave those keys
// this member's: they count connections it still holds. Another member
// trying to create them before the next attempt finds them held, and the
// next attempt keeps every connection on its own key, revoking none.
func TestRejoinFailsAfterMovingKeys(t *testing.T) {
	m := newRejoinMember(t, rejoinSetup{permits: 5})
	admin, k, ka, kv, b, f := m.admin, m.k, m.ka, m.kv, m.b, m.f

	ctx, other := m.otherMember(t, 10*time.Second)
	old, held := heldNow(b)
	// The first attempt reads the slots, moves the keys, and its read of
	// the whole budget fails; before the next attempt reads the slots,
	// another member tries to create each of this member's keys, as one
	// would that saw them free.
	st, steal := stealer(ctx, admin, k, other, held)
	kv.after(k.slots(), func() {
		kv.fail(k.root, func() {
			kv.before(k.slots(), steal)
		})
	})
	ka.cut(old)
	st.wait(t, b, "the rejoin did not fail and try again")
	rejoinedFrom(t, b, old, 10*time.Second)
	if len(st.taken) > 0 || f.asked.Load() > 0 {
		t.Fatalf("after a rejoin failed past moving its keys, another member took the keys of slots %v and %d connections held through it were revoked; want none of either",
			st.taken, f.asked.Load())
	}
	b.mu.Lock()
	lease := b.lease
	for _, p := range held {
		if o := b.owned[p.slot]; p.cover != p.slot || o == nil || o.permit != p {
			t.Errorf("the permit on slot %d is not backed by its own key after rejoining (cover %d)", p.slot, p.cover)
		}
	}
	b.mu.Unlock()
	for _, p := range held {
		r, err := admin.Get(ctx, k.slot(p.slot))
		if err != nil {
			t.Fatal(err)
		}
		if len(r.Kvs) != 1 || string(r.Kvs[0].Value) != b.ID() || r.Kvs[0].Lease != int64(lease) {
			t.Errorf("slot key %d: %v, want %s under lease %x", p.slot, r.Kvs, b.ID(), int64(lease))
		}
	}
}

// When the lease a failed attempt kept is gone by the next attempt (it
// expired, or was revoked, as here), the next attempt takes a new one and
// creates the keys again, being free, keeping every connection.
func TestRejoinAfterKeptLeaseEnded(t *testing.T) {
	m := newRejoinMember(t, rejoinSetup{permits: 5})
	admin, k, ka, kv, b, f := m.admin, m.k, m.ka, m.kv, m.b, m.f
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	b.mu.Lock()
	old := b.lease
	b.mu.Unlock()
	var kept clientv3.LeaseID
	ended := make(chan error, 1)
	kv.after(k.slots(), func() {
		kv.fail(k.root, func() {
			// The keys moved to the attempt's lease: end it.
			r, err := admin.Get(ctx, k.member(b.ID()))
			if err == nil && len(r.Kvs) == 1 {
				kept = clientv3.LeaseID(r.Kvs[0].Lease)
				_, err = admin.Revoke(ctx, kept)
			}
			ended <- err
		})
	})
	ka.cut(old)
	select {
	case err := <-ended:
		if err != nil {
			t.Fatalf("ending the lease of the attempt that failed: %v", err)
		}
	case <-ctx.Done():
		t.Fatalf("the rejoin did not fail: %s", debugState(b))
	}
	eventually(t, 10*time.Second, "rejoined under a new lease", func() (bool, string) {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.session && b.lease != old && b.lease != kept,
			fmt.Sprintf("lease %x (old %x, kept %x), session %v", int64(b.lease), int64(old), int64(kept), b.session)
	})
	if n := f.asked.Load(); n != 0 {
		t.Errorf("%d connections held through the rejoin were revoked, want none", n)
	}
	if n := coveredOwn(b); n != 5 {
		t.Errorf("%d permits backed by their own key after rejoining, want 5: %s", n, debugState(b))
	}
}

// A member closed while it rejoins, after an attempt that failed past
// moving its keys, leaves nothing in etcd: Close revokes the lease that
// attempt kept as well as the member's last one.
func TestCloseWhileRejoiningLeavesNoKeys(t *testing.T) {
	m := newRejoinMember(t, rejoinSetup{permits: 5, unwatched: true})
	admin, k, ka, kv, b, f := m.admin, m.k, m.ka, m.kv, m.b, m.f
	b.mu.Lock()
	old := b.lease
	b.mu.Unlock()
	// The first attempt fails past moving the keys; the next one is held
	// at its read of the slots until Close has begun.
	reached, closing := make(chan struct{}), make(chan struct{})
	kv.after(k.slots(), func() {
		kv.fail(k.root, func() {
			kv.before(k.slots(), func() {
				close(reached)
				<-closing
			})
		})
	})
	ka.cut(old)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	select {
	case <-reached:
	case <-ctx.Done():
		t.Fatalf("the rejoin did not fail and try again: %s", debugState(b))
	}
	closed := make(chan error, 1)
	go func() { closed <- b.Close() }()
	<-b.ctx.Done()
	close(closing)
	if err := <-closed; err == nil || !strings.Contains(err.Error(), "still open") {
		t.Errorf("Close with 5 connections open: %v; want an error saying they were", err)
	}
	f.stop()
	r, err := admin.Get(ctx, k.root, clientv3.WithPrefix())
	if err != nil {
		t.Fatal(err)
	}
	for _, kv := range r.Kvs {
		if string(kv.Value) == b.ID() || strings.HasSuffix(string(kv.Key), b.ID()) {
			t.Errorf("after Close, %s is left in etcd under lease %x", kv.Key, kv.Lease)
		}
	}
}

// faultKV is a client's KV that, once armed for a key, runs a function
// right before the next read of it or after the next that succeeds, or
// fails the next read, or runs one before a transaction that writes it:
// the test's way to change etcd, break a request, or hold one back, at a
// given step.
type faultKV struct {
	clientv3.KV
	mu           sync.Mutex
	hooks        []kvHook
	commitPrefix string
	commitFn     func(key string)
}

type kvHook struct {
	key    string
	before bool // run fn before the read, not after it
	fail   bool // fail the read (after running fn)
	fn     func()
}

// errInjected is the error of a read faultKV fails.
var errInjected = errors.New("faultKV: a read failed on purpose")

func (k *faultKV) Get(ctx context.Context, key string, opts ...clientv3.OpOption) (*clientv3.GetResponse, error) {
	k.mu.Lock()
	var h *kvHook
	for i := range k.hooks {
		if k.hooks[i].key == key {
			hh := k.hooks[i]
			h = &hh
			k.hooks = append(k.hooks[:i], k.hooks[i+1:]...)
			break
		}
	}
	k.mu.Unlock()
	if h != nil && (h.before || h.fail) {
		h.fn()
		if h.fail {
			return nil, errInjected
		}
	}
	r, err := k.KV.Get(ctx, key, opts...)
	if h != nil && !h.before && !h.fail {
		if err != nil {
			k.arm(*h) // for the next read, which the caller retries
			return r, err
		}
		h.fn()
	}
	return r, err
}

// Txn returns a transaction whose Commit runs the function armed by
// beforeCommit first, if the transaction puts a key under its prefix.
func (k *faultKV) Txn(ctx context.Context) clientv3.Txn {
	return &hookTxn{Txn: k.KV.Txn(ctx), k: k}
}

// beforeCommit makes the next transaction that puts a key under prefix
// run fn, with that key, before it is sent.
func (k *faultKV) beforeCommit(prefix string, fn func(key string)) {
	k.mu.Lock()
	k.commitPrefix, k.commitFn = prefix, fn
	k.mu.Unlock()
}

// hookTxn is a transaction of faultKV's.
type hookTxn struct {
	clientv3.Txn
	k    *faultKV
	puts []string
}

func (t *hookTxn) If(cs ...clientv3.Cmp) clientv3.Txn { t.Txn = t.Txn.If(cs...); return t }

func (t *hookTxn) Then(ops ...clientv3.Op) clientv3.Txn {
	for _, op := range ops {
		if op.IsPut() {
			t.puts = append(t.puts, string(op.KeyBytes()))
		}
	}
	t.Txn = t.Txn.Then(ops...)
	return t
}

func (t *hookTxn) Else(ops ...clientv3.Op) clientv3.Txn { t.Txn = t.Txn.Else(ops...); return t }

func (t *hookTxn) Commit() (*clientv3.TxnResponse, error) {
	var fn func(string)
	var key string
	t.k.mu.Lock()
	for _, p := range t.puts {
		if t.k.commitFn != nil && strings.HasPrefix(p, t.k.commitPrefix) {
			fn, key = t.k.commitFn, p
			t.k.commitFn = nil
			break
		}
	}
	t.k.mu.Unlock()
	if fn != nil {
		fn(key)
	}
	return t.Txn.Commit()
}

func (k *faultKV) arm(h kvHook) {
	k.mu.Lock()
	k.hooks = append(k.hooks, h)
	k.mu.Unlock()
}

// after makes the next successful read of key run fn after it.
func (k *faultKV) after(key string, fn func()) { k.arm(kvHook{key: key, fn: fn}) }

// before makes the next read of key run fn before it.
func (k *faultKV) before(key string, fn func()) { k.arm(kvHook{key: key, before: true, fn: fn}) }

// fail makes the next read of key run fn and fail.
func (k *faultKV) fail(key string, fn func()) { k.arm(kvHook{key: key, fail: true, fn: fn}) }
