package shoaletcd

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/etcdtest"
)

// A member whose last pool has left is out of the budget: its Status (and
// Members, which its pools' Stats.BudgetMembers read) no longer count it
// among the members, nor report the demand it published while it was in.
func TestStatusOfAMemberThatLeft(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	ba := newBudget(t, addr, Options{Name: "db", Size: 10, Prefix: prefix})
	bb := newBudget(t, addr, Options{Name: "db", Size: 10, Prefix: prefix})
	a := newFakePool(t, ba, 100)
	b := newFakePool(t, bb, 100)
	eventually(t, 3*time.Second, "5 each", func() (bool, string) {
		return a.holding() == 5 && b.holding() == 5, fmt.Sprintf("A %d, B %d", a.holding(), b.holding())
	})
	if st := ba.Status(); st.Members != 2 || st.Demand != 10 {
		t.Fatalf("A's status with both members in: %+v, want 2 members and its demand of 10", st)
	}
	a.stop() // A's one pool leaves, and A with it
	eventually(t, 3*time.Second, "B holds all 10", func() (bool, string) {
		return b.holding() == 10, fmt.Sprintf("B %d", b.holding())
	})
	eventually(t, 3*time.Second, "A's status says it left", func() (bool, string) {
		st := ba.Status()
		return st.Members == 1 && ba.Members() == 1 && st.Demand == 0 && st.Share == 0 && st.Held == 0,
			fmt.Sprintf("status %+v (want 1 member, B, and no demand, share or slots); B sees %d member(s)", st, bb.Members())
	})
	// A pool that joins again makes A a member again.
	newFakePool(t, ba, 100)
	eventually(t, 3*time.Second, "A in again", func() (bool, string) {
		st := ba.Status()
		return st.Members == 2 && st.Demand == 10, fmt.Sprintf("status %+v", st)
	})
}
