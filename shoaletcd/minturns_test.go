package shoaletcd

import (
	"context"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/etcdtest"
)

// When the member's share is short of its pools' minimums (Options.Min
// below their sum, and another member takes the rest), the minimums take
// turns: the pool granted its minimum changes every IdleTime, at least a
// second, so that no pool of the member waits for ever while another keeps
// its minimum idle.
func TestPoolMinimumsBeyondTheMembersMinTakeTurns(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	const size = 4
	watchSlots(t, admin, prefix, "db", size)
	other := newFakePool(t, newBudget(t, addr, Options{Name: "db", Size: size, Prefix: prefix, IdleTime: 200 * time.Millisecond}), 100)
	b := newBudget(t, addr, Options{Name: "db", Size: size, Min: 2, Prefix: prefix, IdleTime: 200 * time.Millisecond})
	d := &countingDial{}
	var pools []*shoal.Pool[int]
	for _, name := range []string{"orders", "billing"} {
		p, err := shoal.New(shoal.Config[int]{Name: name, MaxConns: size, MinConns: 2, Dial: d.dial, Close: d.close, Budget: b})
		if err != nil {
			t.Fatalf("pool %s: %v", name, err)
		}
		pools = append(pools, p)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, p := range pools {
			if err := p.Close(ctx); err != nil {
				t.Error(err)
			}
		}
	}()
	eventually(t, 5*time.Second, "the other member holding all but this member's Min", func() (bool, string) {
		return other.holding() == size-2 && b.Status().Share == 2, poolsOf(b) + " " + debugState(b)
	})
	// Each pool in turn holds the member's 2 as its minimum.
	for _, want := range []string{"orders 2/2, billing 0/0", "orders 0/0, billing 2/2", "orders 2/2, billing 0/0"} {
		eventually(t, 5*time.Second, "the minimums' turn: "+want, func() (bool, string) {
			st := poolsOf(b)
			return st == want, st + " " + debugState(b)
		})
	}
	if m := d.most.Load(); m > 2 {
		t.Fatalf("the member's pools held %d connections at once, above its share of 2", m)
	}
}
