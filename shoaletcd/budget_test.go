package shoaletcd

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/etcdtest"
	"github.com/shoalpool/shoal/internal/fairshare"
)

// A member's minimum is its share even while it is idle, and counts
// before the others' demand; when it gets hungry too, the rest is shared.
func TestMinimumsHonoured(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	watchSlots(t, admin, prefix, "db", 10)
	a := newFakePool(t, newBudget(t, addr, Options{Name: "db", Size: 10, Min: 4, Prefix: prefix}), 0)
	b := newFakePool(t, newBudget(t, addr, Options{Name: "db", Size: 10, Prefix: prefix}), 100)
	eventually(t, 2*time.Second, "idle A keeps its Min 4, B gets the other 6", func() (bool, string) {
		return a.share.Load() == 4 && b.holding() == 6, fmt.Sprintf("A share %d, B holds %d", a.share.Load(), b.holding())
	})
	a.demand.Store(100)
	eventually(t, 2*time.Second, "both hungry: 5 each", func() (bool, string) {
		return a.holding() == 5 && b.holding() == 5, fmt.Sprintf("A holds %d, B holds %d", a.holding(), b.holding())
	})
}

// A member whose demand falls keeps its share for IdleTime (no thrash on a
// dip), then gives all but its Min back to the hungry member.
func TestIdleMemberGivesBack(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	watchSlots(t, admin, prefix, "db", 10)
	const idle = 1500 * time.Millisecond
	a := newFakePool(t, newBudget(t, addr, Options{Name: "db", Size: 10, Min: 1, IdleTime: idle, Prefix: prefix}), 100)
	b := newFakePool(t, newBudget(t, addr, Options{Name: "db", Size: 10, IdleTime: idle, Prefix: prefix}), 100)
	eventually(t, 2*time.Second, "5 each", func() (bool, string) {
		return a.holding() == 5 && b.holding() == 5, fmt.Sprintf("A holds %d, B holds %d", a.holding(), b.holding())
	})
	a.demand.Store(0)
	dropped := time.Now()
	time.Sleep(idle / 3)
	if s := a.share.Load(); s != 5 {
		t.Fatalf("A's share fell to %d within %v of its demand falling; IdleTime is %v", s, idle/3, idle)
	}
	eventually(t, idle+2*time.Second, "A back to its Min 1, B grown to 9", func() (bool, string) {
		return a.share.Load() == 1 && b.holding() == 9, fmt.Sprintf("A share %d, B holds %d", a.share.Load(), b.holding())
	})
	t.Logf("B had 9 permits %v after A's demand fell (IdleTime %v)", time.Since(dropped).Round(time.Millisecond), idle)
}

// A member joining a full budget gets its fair share within 2s, and the
// others reach theirs only by releasing (no permit is taken from anyone).
func TestJoinerGetsFairShare(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	watchSlots(t, admin, prefix, "db", 12)
	a := newFakePool(t, newBudget(t, addr, Options{Name: "db", Size: 12, Prefix: prefix}), 100)
	b := newFakePool(t, newBudget(t, addr, Options{Name: "db", Size: 12, Prefix: prefix}), 100)
	eventually(t, 2*time.Second, "6 each", func() (bool, string) {
		return a.holding() == 6 && b.holding() == 6, fmt.Sprintf("A %d, B %d", a.holding(), b.holding())
	})
	start := time.Now()
	c := newFakePool(t, newBudget(t, addr, Options{Name: "db", Size: 12, Prefix: prefix}), 100)
	eventually(t, 2*time.Second, "4 each after C joined", func() (bool, string) {
		return a.holding() == 4 && b.holding() == 4 && c.holding() == 4,
			fmt.Sprintf("A %d, B %d, C %d", a.holding(), b.holding(), c.holding())
	})
	t.Logf("C had its 4 after %v", time.Since(start).Round(time.Millisecond))
	if s := slotsHeld(t, admin, prefix, "db"); s != 12 {
		t.Fatalf("%d slot keys in etcd, want 12", s)
	}
}

// A member that dies without closing (its client closed, so its lease is
// no longer kept alive, but not revoked) frees its slots within the TTL
// plus the half second etcd takes to notice an expired lease
// (docs/operating.md). The default TTL, 5s, is the one tested: the
// survivor must hold every slot within 7s, the 5.5s and as much as 1.5s
// more for it to see the slots free and dial on them.
func TestKilledMemberFreesSlots(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	watchSlots(t, admin, prefix, "db", 10)
	doomedClient := newClient(t, addr)
	doomed, err := New(context.Background(), doomedClient, Options{Name: "db", Size: 10, Prefix: prefix, Logger: testLogger(t)})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = doomed.Close() })
	a := newFakePool(t, doomed, 100)
	b := newFakePool(t, newBudget(t, addr, Options{Name: "db", Size: 10, Prefix: prefix}), 100)
	eventually(t, 2*time.Second, "5 each", func() (bool, string) {
		return a.holding() == 5 && b.holding() == 5, fmt.Sprintf("A %d, B %d", a.holding(), b.holding())
	})
	killed := time.Now()
	_ = doomedClient.Close() // no revocation: the lease must run out
	eventually(t, 7*time.Second, "B holds all 10 after A died, within the TTL (5s), etcd's half second and the survivor's own", func() (bool, string) {
		return b.holding() == 10, fmt.Sprintf("B %d, slot keys %d", b.holding(), slotsHeld(t, admin, prefix, "db"))
	})
	t.Logf("the survivor had all 10 slots %v after the other's client closed (TTL 5s)", time.Since(killed).Round(time.Millisecond))
}

// Members must agree on Size while any is alive; with none alive the size
// is replaced by the next member's.
func TestSizeMismatch(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	first := newBudget(t, addr, Options{Name: "db", Size: 10, Prefix: prefix})
	_, err := New(context.Background(), newClient(t, addr), Options{Name: "db", Size: 8, Prefix: prefix})
	if !errors.Is(err, ErrSizeMismatch) || !strings.Contains(err.Error(), "size 10") || !strings.Contains(err.Error(), "Size 8") {
		t.Fatalf("New with Size 8 against 10: %v; want ErrSizeMismatch naming both", err)
	}
	t.Logf("error: %v", err)
	if err := first.Close(); err != nil {
		t.Fatal(err)
	}
	if v, err := Read(context.Background(), admin, "db", prefix); err != nil || len(v.Members) != 0 {
		t.Fatalf("after Close, Read = %+v, %v; want no members", v, err)
	}
	b := newBudget(t, addr, Options{Name: "db", Size: 8, Prefix: prefix})
	if v, err := Read(context.Background(), admin, "db", prefix); err != nil || v.Size != 8 {
		t.Fatalf("after every member left, New with Size 8: Read = %+v, %v", v, err)
	}
	_ = b
}

// A joiner whose minimum would push the sum of minimums over the size is
// refused, naming the sum and the size; one that fits is not.
func TestMinimumsExceedSize(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	newBudget(t, addr, Options{Name: "db", Size: 10, Min: 6, Prefix: prefix})
	_, err := New(context.Background(), newClient(t, addr), Options{Name: "db", Size: 10, Min: 5, Prefix: prefix})
	if !errors.Is(err, ErrMinimums) || !strings.Contains(err.Error(), "sum to 11") || !strings.Contains(err.Error(), "size 10") {
		t.Fatalf("New with Min 5 next to Min 6, size 10: %v; want ErrMinimums naming 11 and 10", err)
	}
	t.Logf("error: %v", err)
	newBudget(t, addr, Options{Name: "db", Size: 10, Min: 4, Prefix: prefix})
	if v, err := Read(context.Background(), admin, "db", prefix); err != nil || len(v.Members) != 2 {
		t.Fatalf("Read = %+v, %v; want the two members that fit", v, err)
	}
}

// Bad options are refused with the field named, as a shoal.ConfigError.
func TestOptionsErrors(t *testing.T) {
	for _, c := range []struct {
		o     Options
		field string
	}{
		{Options{Size: 1}, "Name"},
		{Options{Name: "a/b", Size: 1}, "Name"},
		{Options{Name: "x"}, "Size"},
		{Options{Name: "x", Size: -1}, "Size"},
		{Options{Name: "x", Size: 2, Min: 3}, "Min"},
		{Options{Name: "x", Size: 2, TTL: time.Second}, "TTL"},
		{Options{Name: "x", Size: 2, TTL: -time.Second}, "TTL"},
	} {
		_, err := c.o.withDefaults()
		var ce *shoal.ConfigError
		if !errors.As(err, &ce) || ce.Struct != "shoaletcd.Options" || ce.Field != c.field ||
			!strings.HasPrefix(err.Error(), "shoaletcd: Options."+c.field+" ") {
			t.Errorf("%+v: %v; want a ConfigError naming Options.%s", c.o, err, c.field)
		}
	}
}

// Zero is the default; a negative Min or IdleTime is none.
func TestOptionsZeroIsTheDefaultNegativeIsNone(t *testing.T) {
	o, err := Options{Name: "x", Size: 2}.withDefaults()
	if err != nil || o.TTL != 5*time.Second || o.IdleTime != 2*time.Second || o.Min != 0 ||
		o.Prefix != DefaultPrefix || o.Logger != slog.Default() {
		t.Errorf("defaults: %+v, %v", o, err)
	}
	o, err = Options{Name: "x", Size: 2, Min: -1, IdleTime: -1}.withDefaults()
	if err != nil || o.Min != 0 || o.IdleTime != 0 {
		t.Errorf("Min -1, IdleTime -1: %+v, %v; want both 0 (none)", o, err)
	}
	// IdleTime none: the published demand follows a fall at once.
	s := fairshare.Smoother{Window: o.IdleTime}
	now := time.Now()
	s.Add(now, 8)
	if got := s.Add(now.Add(time.Millisecond), 2); got != 2 {
		t.Errorf("with no IdleTime a fall from 8 to 2 publishes %d, want 2", got)
	}
}

// A fenced slot is passed over: its key is deleted on release, not kept,
// and the next permits get other slots.
func TestFencedSlotAvoided(t *testing.T) {
	addr := etcdtest.SharedAddr(t)
	admin := newClient(t, addr)
	prefix := testPrefix(t, admin)
	b := newBudget(t, addr, Options{Name: "db", Size: 3, Prefix: prefix})
	f := &fakePool{}
	f.demand.Store(3)
	leave, err := b.Join(f)
	if err != nil {
		t.Fatal(err)
	}
	defer leave()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	p, err := b.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	fenced := p.Slot()
	p.(interface{ Fenced() }).Fenced()
	p.Release()
	for range 6 {
		q, err := b.Acquire(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if q.Slot() == fenced {
			t.Fatalf("got fenced slot %d again", fenced)
		}
		q.Release()
	}
	eventually(t, 2*time.Second, "the fenced slot's key deleted", func() (bool, string) {
		v, err := Read(context.Background(), admin, "db", prefix)
		if err != nil || len(v.Members) != 1 {
			return false, fmt.Sprint(v, err)
		}
		for _, s := range v.Members[0].Slots {
			if s == fenced {
				return false, fmt.Sprintf("member still holds %v", v.Members[0].Slots)
			}
		}
		return true, ""
	})
}

// FenceKey is the same for every member of a budget and differs between
// budgets.
func TestFenceKey(t *testing.T) {
	a, b, c := fenceKey(DefaultPrefix, "db"), fenceKey(DefaultPrefix, "db"), fenceKey(DefaultPrefix, "db2")
	if a != b || a == c {
		t.Fatalf("fence keys %d %d %d", a, b, c)
	}
}
