package metricstest

import (
	"context"
	"errors"
	"testing"

	"github.com/shoalpool/shoal"
)

// testPoolNames: a name must be valid UTF-8 and not in use; it is free
// again after Unregister. (An empty one is the pool's own: testPoolsOwnName.)
func testPoolNames(t *testing.T, b Backend) {
	set := b.New(t)
	if _, err := set.Pool("\xff"); err == nil {
		t.Error("invalid UTF-8 accepted")
	}
	a := register(t, set, "a")
	if _, err := set.Pool("a"); !errors.Is(err, b.ErrDuplicatePool) {
		t.Errorf("duplicate name: got %v, want ErrDuplicatePool", err)
	}
	a.Unregister()
	a.Unregister() // a second call does nothing
	register(t, set, "a")
}

// testPoolsOwnName: metrics made without a name take the name of the pool
// that attaches them (its Stats.Name), the first free of name, name-2...
// when another has it; hosts attached before that are reported under it;
// metrics unregistered before any pool attached them stay out.
func testPoolsOwnName(t *testing.T, b Backend) {
	set := b.New(t)
	unnamed := func() Metrics {
		m, err := set.Pool("")
		if err != nil {
			t.Fatalf("Pool(\"\"): %v", err)
		}
		if m.Name() != "" {
			t.Errorf("unnamed metrics say %q before a pool attached them", m.Name())
		}
		return m
	}
	newPool := func(name string, obs shoal.Observer) *shoal.Pool[*FakeConn] {
		p, err := shoal.New(shoal.Config[*FakeConn]{Name: name, MaxConns: 2, Dial: FakeDial(), Observer: obs})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = p.Close(context.Background()) })
		return p
	}
	a := unnamed()
	var hosts hostsVar
	hosts.set(shoal.HostStat{Addr: "db:5432", Open: 1, Role: "primary"})
	a.AttachHosts(hosts.get) // before the name is known
	pa := newPool("orders", a)
	l, err := pa.Acquire(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	l.Release()
	twin := unnamed()
	newPool("orders", twin)
	anon := unnamed()
	anonPool := newPool("", anon)
	gone := unnamed()
	gone.Unregister()
	newPool("gone", gone)

	if a.Name() != "orders" || twin.Name() != "orders-2" || anon.Name() != anonPool.Stats().Name {
		t.Errorf("names %q, %q, %q; want orders, orders-2 and %q", a.Name(), twin.Name(), anon.Name(), anonPool.Stats().Name)
	}
	got := set.Read(t)
	check(t, "pools named by their Config", got.Only(Max, HostOpen), Values{
		Key(Max, "pool=orders"):                      2,
		Key(Max, "pool=orders-2"):                    2,
		Key(Max, "pool="+anonPool.Stats().Name):      2,
		Key(HostOpen, "pool=orders", "host=db:5432"): 1,
	})
	// The acquire was recorded under the name (a histogram nothing was
	// recorded in is reported by Prometheus, not by OpenTelemetry).
	if n := got[Key(WaitTime+".count", "pool=orders")]; n != 1 {
		t.Errorf("wait_time count of orders: %v, want 1", n)
	}
}
