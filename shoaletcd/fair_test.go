package shoaletcd

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/etcdtest"
)

// Four hungry members of a budget of 10 each get within one of 10/4,
// within 2s; etcd never holds more than 10 slot keys.
func TestFairShareHungry(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	const n, k = 10, 4
	watchSlots(t, admin, prefix, "db", n)
	var pools []*fakePool
	for range k {
		b := newBudget(t, addr, Options{Name: "db", Size: n, Prefix: prefix})
		pools = append(pools, newFakePool(t, b, 100))
	}
	eventually(t, 2*time.Second, "every member within one of N/k", func() (bool, string) {
		state, ok := "", true
		for _, f := range pools {
			h := f.holding()
			state += fmt.Sprintf("\n %d(share %d) %s", h, f.share.Load(), debugState(f.b))
			if h < n/k || h > (n+k-1)/k {
				ok = false
			}
		}
		return ok, state
	})
}
