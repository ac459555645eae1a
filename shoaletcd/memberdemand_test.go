package shoaletcd

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/etcdtest"
)

// In etcd a process is one member whose demand is the sum of its pools'
// demands: two pools wanting 2 each publish 4, what `shoal budget` shows,
// and the member's max-min share beside a hungry member is 4, so both
// pools are served. A member that published its busiest pool's demand
// instead would be held to 2.
func TestMemberDemandIsItsPoolsDemandsSummed(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	const size = 8
	watchSlots(t, admin, prefix, "db", size)
	other := newFakePool(t, newBudget(t, addr, Options{Name: "db", Size: size, Prefix: prefix, IdleTime: 200 * time.Millisecond}), 100)
	b := newBudget(t, addr, Options{Name: "db", Size: size, Prefix: prefix, IdleTime: 200 * time.Millisecond, Label: "two-pools"})
	d := &countingDial{}
	var pools []*shoal.Pool[int]
	var stops []func()
	for _, name := range []string{"orders", "billing"} {
		p, err := shoal.New(shoal.Config[int]{Name: name, MaxConns: size, Dial: d.dial, Close: d.close, Budget: b})
		if err != nil {
			t.Fatalf("pool %s: %v", name, err)
		}
		pools = append(pools, p)
		stops = append(stops, holdLeases(p, 2))
	}
	defer func() {
		for _, stop := range stops {
			stop()
		}
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		for _, p := range pools {
			if err := p.Close(ctx); err != nil {
				t.Error(err)
			}
		}
	}()
	eventually(t, 5*time.Second, "the member publishing demand 4 and its pools holding 2 each", func() (bool, string) {
		v, err := Read(context.Background(), admin, "db", prefix)
		if err != nil {
			return false, err.Error()
		}
		var mine *MemberView
		for i := range v.Members {
			if v.Members[i].Label == "two-pools" {
				mine = &v.Members[i]
			}
		}
		st := poolsOf(b)
		return mine != nil && mine.Demand == 4 && mine.Share == 4 && st == "orders 2/2, billing 2/2" && other.holding() == size-4,
			fmt.Sprintf("%s; view %+v; other holds %d", st, v.Members, other.holding())
	})
}
