package shoaletcd

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/shoalpool/shoal/internal/etcdtest"
)

// suspects counts the permits f holds whose Suspect says true.
func (f *fakePool) suspects() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, p := range f.held {
		if p.(interface{ Suspect() bool }).Suspect() {
			n++
		}
	}
	return n
}

// TestSlotsOfADeadLeaseAreSuspect: slots freed by a holder's release are
// handed out plainly; slots that vanished with a holder's lease come with
// Suspect, so that shoalpgx checks the server before it dials with them.
func TestSlotsOfADeadLeaseAreSuspect(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	watchSlots(t, admin, prefix, "db", 6)
	doomedClient := newClient(t, addr)
	doomed, err := New(context.Background(), doomedClient, Options{Name: "db", Size: 6, Prefix: prefix, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = doomed.Close() })
	a := newFakePool(t, doomed, 3)
	b := newFakePool(t, newBudget(t, addr, Options{Name: "db", Size: 6, Prefix: prefix}), 3)
	eventually(t, 3*time.Second, "3 each", func() (bool, string) {
		return a.holding() == 3 && b.holding() == 3, fmt.Sprintf("A %d, B %d", a.holding(), b.holding())
	})
	if n := b.suspects(); n != 0 {
		t.Fatalf("%d of B's permits suspect with no lease ended", n)
	}

	// A dies without revoking: its three slots vanish with its lease.
	_ = doomedClient.Close()
	b.demand.Store(6)
	eventually(t, 10*time.Second, "B holds all 6 after A's lease ran out", func() (bool, string) {
		return b.holding() == 6, fmt.Sprintf("B %d", b.holding())
	})
	if n := b.suspects(); n != 3 {
		t.Fatalf("%d of B's permits suspect, want the 3 that were A's", n)
	}

	// B's connections close without being fenced (they held their
	// slots), then B dials again with the same keys: nothing is suspect.
	b.demand.Store(0)
	eventually(t, 10*time.Second, "B holds nothing", func() (bool, string) {
		return b.holding() == 0, fmt.Sprintf("B %d", b.holding())
	})
	b.demand.Store(6)
	eventually(t, 10*time.Second, "B holds all 6 again", func() (bool, string) {
		return b.holding() == 6, fmt.Sprintf("B %d", b.holding())
	})
	if n := b.suspects(); n != 0 {
		t.Fatalf("%d permits suspect after their keys were given back cleanly", n)
	}
}
