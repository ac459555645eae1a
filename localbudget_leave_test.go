package shoal

import (
	"context"
	"testing"
	"testing/synctest"
	"time"
)

// A member that leaves while its AcquireFor waits ends that wait at once,
// as AcquireFor says, though the division the leave asks for changes no
// other member's share and no permit comes back.
func TestLocalBudgetLeaveEndsTheLeaversWait(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		b := mustBudget(t, 1)
		holder, m := &countMember{}, &countMember{}
		holder.demand.Store(1)
		leaveHolder, err := b.Join(holder)
		if err != nil {
			t.Fatal(err)
		}
		defer leaveHolder()
		leave, err := b.Join(m)
		if err != nil {
			t.Fatal(err)
		}
		permit, err := b.AcquireFor(context.Background(), holder)
		if err != nil {
			t.Fatal(err)
		}
		defer permit.Release()
		got := make(chan error, 1)
		go func() {
			_, err := b.AcquireFor(context.Background(), m)
			got <- err
		}()
		time.Sleep(time.Second) // samples and divisions come and go
		synctest.Wait()
		select {
		case err := <-got:
			t.Fatalf("AcquireFor with the budget's one permit out: %v", err)
		default:
		}
		leave()
		synctest.Wait()
		select {
		case err := <-got:
			if err == nil {
				t.Fatal("AcquireFor of a member that left returned a permit")
			}
		default:
			t.Fatal("AcquireFor still waits after its member left the budget")
		}
	})
}
