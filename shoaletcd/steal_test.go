package shoaletcd

import (
	"context"
	"fmt"
	"testing"
	"time"

	clientv3 "go.etcd.io/etcd/client/v3"
)

// heldNow returns b's lease and the permits it holds now.
func heldNow(b *Budget) (clientv3.LeaseID, []*permit) {
	b.mu.Lock()
	defer b.mu.Unlock()
	var held []*permit
	for p := range b.permits {
		held = append(held, p)
	}
	return b.lease, held
}

// keyStealer plays another member that, seeing the slots of held free,
// tries to create each of their keys under its own lease: the rejoin
// tests run it between two steps of a rejoin.
type keyStealer struct {
	taken []int         // the slots whose keys it created
	err   error         // a request that failed
	done  chan struct{} // closed once it has tried every key
	ctx   context.Context
}

// stealer returns a keyStealer and the attempt it makes, to run once.
func stealer(ctx context.Context, admin *clientv3.Client, k keys, lease clientv3.LeaseID, held []*permit) (*keyStealer, func()) {
	s := &keyStealer{done: make(chan struct{}), ctx: ctx}
	return s, func() {
		defer close(s.done)
		for _, p := range held {
			key := k.slot(p.slot)
			r, err := admin.Txn(ctx).If(clientv3.Compare(clientv3.CreateRevision(key), "=", 0)).
				Then(clientv3.OpPut(key, "other", clientv3.WithLease(lease))).Commit()
			if err != nil {
				s.err = err
				return
			}
			if r.Succeeded {
				s.taken = append(s.taken, p.slot)
			}
		}
	}
}

// wait waits for the attempt, failing t with what when the stealer's ctx
// ends first.
func (s *keyStealer) wait(t *testing.T, b *Budget, what string) {
	t.Helper()
	select {
	case <-s.done:
	case <-s.ctx.Done():
		t.Fatalf("%s: %s", what, debugState(b))
	}
	if s.err != nil {
		t.Fatal(s.err)
	}
}

// rejoinedFrom waits until b has a session under a lease other than old.
func rejoinedFrom(t *testing.T, b *Budget, old clientv3.LeaseID, within time.Duration) {
	t.Helper()
	eventually(t, within, "rejoined under a new lease", func() (bool, string) {
		b.mu.Lock()
		defer b.mu.Unlock()
		return b.session && b.lease != old, fmt.Sprintf("lease %x (old %x), session %v", int64(b.lease), int64(old), b.session)
	})
}
