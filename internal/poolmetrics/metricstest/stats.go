package metricstest

import (
	"context"
	"fmt"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
)

// testReadsStatsOnlyWhenRead: Stats is called by a read, once per read,
// not by the observer; detaching reads it once more (for the pool's last
// barge-miss count), and then never.
func testReadsStatsOnlyWhenRead(t *testing.T, b Backend) {
	set := b.New(t)
	p := register(t, set, "p")
	var calls atomic.Int32
	detach := p.Attach(func() shoal.Stats { calls.Add(1); return shoal.Stats{MaxConns: 3} })
	p.ObserveAcquire(time.Millisecond)
	if n := calls.Load(); n != 0 {
		t.Errorf("Stats called %d times before any read", n)
	}
	set.Read(t)
	set.Read(t)
	if n := calls.Load(); n != 2 {
		t.Errorf("Stats called %d times in 2 reads, want 2", n)
	}
	detach()
	detach()
	check(t, "after detach", set.Read(t).Only(Max), Values{})
	if n := calls.Load(); n != 3 {
		t.Errorf("Stats called %d times after detach, want 3: the two reads and detach's last read", n)
	}
}

// testSharedName: pools that share a name (one replacing another while it
// drains) are attached to the same metrics and reported as their sum.
func testSharedName(t *testing.T, b Backend) {
	set := b.New(t)
	p := register(t, set, "https://api.example.com:443")
	old := p.Attach(func() shoal.Stats {
		return shoal.Stats{MaxConns: 4, IdleConns: 0, InUseConns: 2, Leases: 2, Waiting: 0}
	})
	p.Attach(func() shoal.Stats {
		return shoal.Stats{MaxConns: 4, IdleConns: 1, InUseConns: 1, Leases: 1, Waiting: 3, Dialing: 1}
	})
	const pool = "pool=https://api.example.com:443"
	check(t, "both attached", set.Read(t).Only(Count, Max, IdleMax, Pending, Leases, Dialing), Values{
		Key(Count, pool, "state=idle"): 1,
		Key(Count, pool, "state=used"): 3,
		Key(Max, pool):                 8,
		Key(IdleMax, pool):             8,
		Key(Pending, pool):             3,
		Key(Leases, pool):              3,
		Key(Dialing, pool):             1,
	})
	old()
	old()
	check(t, "old pool detached", set.Read(t).Only(Count, Max), Values{
		Key(Count, pool, "state=idle"): 1,
		Key(Count, pool, "state=used"): 1,
		Key(Max, pool):                 4,
	})
}

// testBudget: a pool with a Budget reports its share, demand and the
// budget's members; a pool without one reports none of them.
func testBudget(t *testing.T, b Backend) {
	set := b.New(t)
	register(t, set, "orders").Attach(func() shoal.Stats {
		return shoal.Stats{MaxConns: 32, Share: 10, Demand: 14, BudgetMembers: 4}
	})
	register(t, set, "plain").Attach(func() shoal.Stats { return shoal.Stats{MaxConns: 8, Share: 8, Demand: 2} })
	check(t, "the budgeted pool's alone", set.Read(t).Only(BudgetShare, BudgetDemand, BudgetMembers), Values{
		Key(BudgetShare, "pool=orders"):   10,
		Key(BudgetDemand, "pool=orders"):  14,
		Key(BudgetMembers, "pool=orders"): 4,
	})
}

// testMultiplexed: with several leases per connection, used counts
// connections and the leases metric counts leases.
func testMultiplexed(t *testing.T, b Backend) {
	set := b.New(t)
	HoldStreams(t, register(t, set, "h2"), 3)
	check(t, "3 streams on one connection", set.Read(t).Only(Count, Leases), Values{
		Key(Count, "pool=h2", "state=used"): 1,
		Key(Count, "pool=h2", "state=idle"): 0,
		Key(Leases, "pool=h2"):              3,
	})
}

// testExtras: the counters and histograms of RunExtras's events, each
// close under its reason and every other reason at zero.
func testExtras(t *testing.T, b Backend) {
	set := b.New(t)
	stats := RunExtras(t, register(t, set, "p"))
	if stats.DialErrors != 1 || stats.Dials != 3 || stats.RejectedAcquires != 1 || stats.Closed != 2 {
		t.Fatalf("Stats disagree with the scenario: %+v", stats)
	}
	got := set.Read(t)
	want := Values{
		Key(DialErrors, "pool=p"):          1,
		Key(Rejections, "pool=p"):          1,
		Key(Timeouts, "pool=p"):            0,
		Key(Leaks, "pool=p"):               0,
		Key(CreateTime+".count", "pool=p"): 2,
		Key(WaitTime+".count", "pool=p"):   2,
		Key(UseTime+".count", "pool=p"):    2,
	}
	var closes float64
	for k, v := range got.Only(Closes) {
		closes += v
		want[k] = 0
	}
	want[Key(Closes, "pool=p", "reason=discarded")] = 1
	want[Key(Closes, "pool=p", "reason=pool_closed")] = 1
	check(t, "after the events", got.Only(DialErrors, Rejections, Timeouts, Leaks, CreateTime+".count", WaitTime+".count", UseTime+".count", Closes), want)
	if closes != float64(stats.Closed) {
		t.Errorf("closes summed over reasons = %v, want Stats.Closed = %d", closes, stats.Closed)
	}
	if n := len(got.Only(Closes)); n != len(KnownReasons()) {
		t.Errorf("%d close series, want one per known reason (%d)", n, len(KnownReasons()))
	}
}

// testBargeMisses: the barge-miss counter is Stats.BargeMisses, read when
// read: 1 for a barging pool whose released connection went unclaimed
// while someone waited, 0 for a strict pool taken through the same events
// and for a pool not attached; a closed pool's count stays.
func testBargeMisses(t *testing.T, b Backend) {
	set := b.New(t)
	barging := HandOffOnce(t, register(t, set, "barging"), time.Hour)
	strict := HandOffOnce(t, register(t, set, "strict"), 0)
	register(t, set, "unattached")
	want := Values{
		Key(BargeMisses, "pool=barging"):    1,
		Key(BargeMisses, "pool=strict"):     0,
		Key(BargeMisses, "pool=unattached"): 0,
	}
	check(t, "open pools", set.Read(t).Only(BargeMisses), want)
	for _, p := range []*shoal.Pool[*FakeConn]{barging, strict} {
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	check(t, "closed pools", set.Read(t).Only(BargeMisses), want)
}

// KnownReasons lists every shoal.Reason the core names, found as the
// packages under test find them, so that a reason added to the core needs
// no change in the tests.
func KnownReasons() []shoal.Reason {
	var out []shoal.Reason
	for r := shoal.Reason(1); r.String() != fmt.Sprintf("reason(%d)", int(r)); r++ {
		out = append(out, r)
	}
	return out
}
