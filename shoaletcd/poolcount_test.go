package shoaletcd

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/etcdtest"
)

// A pool's Stats.BudgetMembers (shoal_pool_budget_members) is how many
// pools share its budget, as it is under a shoal.LocalBudget: under
// shoaletcd that is the pools of every member, not the members, which a
// process with several pools would under-count.
func TestBudgetMembersCountsThePoolsOfEveryMember(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	ba := newBudget(t, addr, Options{Name: "db", Size: 8, Prefix: prefix})
	bb := newBudget(t, addr, Options{Name: "db", Size: 8, Prefix: prefix})
	d := &countingDial{}
	var pools []*shoal.Pool[int]
	for i, b := range []*Budget{ba, ba, bb} {
		p, err := shoal.New(shoal.Config[int]{Name: fmt.Sprintf("p%d", i), MaxConns: 4, Dial: d.dial, Close: d.close, Budget: b})
		if err != nil {
			t.Fatal(err)
		}
		pools = append(pools, p)
	}
	members := func() string {
		s := ""
		for _, p := range pools {
			s += fmt.Sprintf("%s %d; ", p.Stats().Name, p.Stats().BudgetMembers)
		}
		return s
	}
	eventually(t, 5*time.Second, "every pool counts the 3 pools sharing the budget", func() (bool, string) {
		return members() == "p0 3; p1 3; p2 3; ", members() + fmt.Sprintf("(members seen: %d, %d)", ba.Members(), bb.Members())
	})
	// One of A's pools closes: two pools are left.
	if err := pools[0].Close(context.Background()); err != nil {
		t.Fatal(err)
	}
	pools = pools[1:]
	eventually(t, 5*time.Second, "every pool counts the 2 pools left", func() (bool, string) {
		return members() == "p1 2; p2 2; ", members()
	})
	for _, p := range pools {
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// A member none of whose pools has opened yet (a process that makes its
// Budget at boot and its pools later) is in the budget, but no pool of its
// shares it: the others' pools do not count one for it.
func TestBudgetMembersCountsNoPoolForAMemberWithout(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	ba := newBudget(t, addr, Options{Name: "db", Size: 8, Prefix: prefix})
	bb := newBudget(t, addr, Options{Name: "db", Size: 8, Prefix: prefix})
	newFakePool(t, bb, 2)
	eventually(t, 5*time.Second, "one pool shares the budget (B's; A has none yet)", func() (bool, string) {
		return ba.Members() == 2 && bb.Members() == 2 && ba.Pools() == 1 && bb.Pools() == 1,
			fmt.Sprintf("members seen: A %d, B %d; pools counted: A %d, B %d", ba.Members(), bb.Members(), ba.Pools(), bb.Pools())
	})
	newFakePool(t, ba, 2)
	eventually(t, 5*time.Second, "both count A's pool once it opens", func() (bool, string) {
		return ba.Pools() == 2 && bb.Pools() == 2, fmt.Sprintf("A counts %d, B counts %d", ba.Pools(), bb.Pools())
	})
}
