package shoaletcd

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/etcdtest"
)

// TestResizedWhileMemberHadNoPool guards a member whose pools all closed
// (so it left the budget in etcd) while another member resized the
// budget: its next pool is refused with ErrSizeMismatch instead of joining
// with the old Size beside members of the new one.
func TestResizedWhileMemberHadNoPool(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	a := newBudget(t, addr, Options{Name: "db", Size: 4, Prefix: prefix})
	f := newFakePool(t, a, 2)
	eventually(t, 5*time.Second, "a holds 2", func() (bool, string) { return f.holding() == 2, debugState(a) })
	f.stop()
	eventually(t, 5*time.Second, "a left the budget in etcd", func() (bool, string) {
		v, err := Read(context.Background(), admin, "db", prefix)
		return err == nil && len(v.Members) == 0, debugState(a)
	})
	b := newBudget(t, addr, Options{Name: "db", Size: 8, Prefix: prefix})
	eventually(t, 5*time.Second, "a saw the new size", func() (bool, string) {
		a.mu.Lock()
		size := a.view.size
		a.mu.Unlock()
		return size == 8, debugState(a)
	})
	g := &fakePool{b: a}
	leave, err := a.Join(g)
	if err == nil {
		leave()
	}
	if !errors.Is(err, ErrSizeMismatch) {
		t.Fatalf("a pool joining a member of Size 4 after %s resized the budget to 8: %v, want ErrSizeMismatch", b.ID(), err)
	}
}
