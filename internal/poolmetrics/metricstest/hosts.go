package metricstest

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
)

// hostsVar is a hosts function whose answer a test changes between reads.
type hostsVar struct {
	mu    sync.Mutex
	hosts []shoal.HostStat
}

func (v *hostsVar) set(hosts ...shoal.HostStat) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.hosts = hosts
}

func (v *hostsVar) get() []shoal.HostStat {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]shoal.HostStat(nil), v.hosts...)
}

// hostValue is what a read should report of one host of pool orders. A
// host never checked (lastCheck 0) has no last-check or lag value.
type hostValue struct {
	addr      string
	open      float64
	role      string
	lastCheck float64 // seconds since the Unix epoch
	lag       float64 // seconds
}

// hostValues returns the values of hosts, keyed as a read keys them.
func hostValues(hosts ...hostValue) Values {
	v := Values{}
	for _, h := range hosts {
		labels := []string{"pool=orders", "host=" + h.addr}
		v[Key(HostOpen, labels...)] = h.open
		v[Key(HostRole, append(labels, "role="+h.role)...)] = 1
		if h.lastCheck != 0 {
			v[Key(HostLastCheck, labels...)] = h.lastCheck
			v[Key(HostLag, labels...)] = h.lag
		}
	}
	return v
}

// testHostValues: each host's connections, role, last check and lag; a
// host never checked has no last-check or lag value, and an empty role
// reads as unknown; addresses that are not host:port come through whole;
// a pool with no hosts function has no per-host values.
func testHostValues(t *testing.T, b Backend) {
	set := b.New(t)
	m := register(t, set, "orders")
	register(t, set, "plain").Attach(func() shoal.Stats { return shoal.Stats{MaxConns: 4} })
	check(t, "nothing attached", set.Read(t).Only(HostNames...), Values{})

	checked := time.Unix(1_700_000_000, 250_000_000)
	m.AttachHosts(func() []shoal.HostStat {
		return []shoal.HostStat{
			{Addr: "db-a:5432", Open: 3, Role: "primary", LastCheck: checked},
			{Addr: "[2001:db8::1]:6432", Open: 1, Role: "standby", Lag: 1500 * time.Millisecond, LastCheck: checked.Add(time.Second)},
			{Addr: "/var/run/postgresql", Role: "unknown", LastError: "no such file"},
			{Addr: "db-d:postgres", Open: 2},
			{Addr: ":5432", Open: 1, Role: "primary"},
		}
	})
	check(t, "five hosts", set.Read(t).Only(HostNames...), hostValues(
		hostValue{"db-a:5432", 3, "primary", 1_700_000_000.25, 0},
		hostValue{"[2001:db8::1]:6432", 1, "standby", 1_700_000_001.25, 1.5},
		hostValue{"/var/run/postgresql", 0, "unknown", 0, 0},
		hostValue{"db-d:postgres", 2, "unknown", 0, 0},
		hostValue{":5432", 1, "primary", 0, 0},
	))
}

// testHostRoleChange: after a failover the role value of each host shows
// its new role, and the value of its old role is gone.
func testHostRoleChange(t *testing.T, b Backend) {
	set := b.New(t)
	var hosts hostsVar
	register(t, set, "orders").AttachHosts(hosts.get)
	before := time.Unix(1_700_000_000, 0)
	after := before.Add(time.Minute)
	hosts.set(
		shoal.HostStat{Addr: "db-a:5432", Open: 2, Role: "primary", LastCheck: before},
		shoal.HostStat{Addr: "db-b:5432", Open: 1, Role: "standby", Lag: time.Second, LastCheck: before},
	)
	check(t, "before the failover", set.Read(t).Only(HostNames...), hostValues(
		hostValue{"db-a:5432", 2, "primary", 1_700_000_000, 0},
		hostValue{"db-b:5432", 1, "standby", 1_700_000_000, 1},
	))
	hosts.set(
		shoal.HostStat{Addr: "db-a:5432", Open: 0, Role: "read-only", LastCheck: after, LastError: "connection refused"},
		shoal.HostStat{Addr: "db-b:5432", Open: 3, Role: "primary", LastCheck: after},
	)
	check(t, "after the failover", set.Read(t).Only(HostNames...), hostValues(
		hostValue{"db-a:5432", 0, "read-only", 1_700_000_060, 0},
		hostValue{"db-b:5432", 3, "primary", 1_700_000_060, 0},
	))
}

// testHostsDetach: detaching ends the per-host values; attaching again
// replaces the function, and the replaced one's detach leaves its
// successor alone; Unregister ends them too.
func testHostsDetach(t *testing.T, b Backend) {
	set := b.New(t)
	m := register(t, set, "orders")
	one := func() []shoal.HostStat { return []shoal.HostStat{{Addr: "db-a:5432", Open: 1, Role: "primary"}} }
	two := func() []shoal.HostStat { return []shoal.HostStat{{Addr: "db-b:5432", Open: 2, Role: "standby"}} }
	dbA := hostValues(hostValue{addr: "db-a:5432", open: 1, role: "primary"})
	dbB := hostValues(hostValue{addr: "db-b:5432", open: 2, role: "standby"})
	read := func() Values { return set.Read(t).Only(HostNames...) }

	detachOne := m.AttachHosts(one)
	check(t, "one attached", read(), dbA)
	detachOne()
	check(t, "one detached", read(), Values{})
	detachOne()

	detachOne = m.AttachHosts(one)
	m.AttachHosts(two)
	check(t, "two replaced one", read(), dbB)
	detachOne()
	check(t, "one's detach after two replaced it", read(), dbB)

	m.AttachHosts(nil)
	check(t, "nil attached", read(), Values{})

	m.AttachHosts(two)
	m.Unregister()
	check(t, "unregistered", read(), Values{})
}

// testHostsSameAddr: two entries for one address (the pool's and its read
// pool's, say) are one value each, not a failed read; an entry with no
// address is left out.
func testHostsSameAddr(t *testing.T, b Backend) {
	set := b.New(t)
	older := time.Unix(1_700_000_000, 0)
	register(t, set, "orders").AttachHosts(func() []shoal.HostStat {
		return []shoal.HostStat{
			{Addr: "db-a:5432", Open: 2, Role: "standby", Lag: time.Second, LastCheck: older},
			{Addr: "db-a:5432", Open: 3, Role: "primary", LastCheck: older.Add(time.Second)},
			{Addr: "", Open: 4, Role: "primary"},
		}
	})
	check(t, "one address twice", set.Read(t).Only(HostNames...), hostValues(
		hostValue{"db-a:5432", 5, "primary", 1_700_000_001, 0},
	))
}

// testHostsConcurrent: reads while hosts functions are attached, replaced
// and detached. The race detector is the judge; every read must also
// succeed and show at most one function's hosts.
func testHostsConcurrent(t *testing.T, b Backend) {
	set := b.New(t)
	m := register(t, set, "orders")
	const rounds = 200
	var wg sync.WaitGroup
	wg.Add(1)
	go func() {
		defer wg.Done()
		for i := range rounds {
			addr := fmt.Sprintf("db-%d:5432", i%3)
			detach := m.AttachHosts(func() []shoal.HostStat {
				return []shoal.HostStat{{Addr: addr, Open: i, Role: "primary", LastCheck: time.Unix(int64(i), 0)}}
			})
			if i%2 == 0 {
				detach()
			}
		}
	}()
	for range rounds {
		got := set.Read(t).Only(HostNames...)
		if len(got) != 0 && len(got) != 4 {
			t.Fatalf("a read saw %d per-host values, want 0 or 4 (one host): %v", len(got), got)
		}
	}
	wg.Wait()
}

// testHostsDetachBeforeNamed: a hosts function attached to metrics made
// without a name, before a pool named them, is detached by the function
// AttachHosts returned, whether the pool named the metrics since or not;
// and a detach of a function since replaced leaves its successor alone,
// as after the naming.
func testHostsDetachBeforeNamed(t *testing.T, b Backend) {
	set := b.New(t)
	m, err := set.Pool("")
	if err != nil {
		t.Fatal(err)
	}
	one := func() []shoal.HostStat { return []shoal.HostStat{{Addr: "db-a:5432", Open: 1, Role: "primary"}} }
	two := func() []shoal.HostStat { return []shoal.HostStat{{Addr: "db-b:5432", Open: 2, Role: "standby"}} }
	read := func() Values { return set.Read(t).Only(HostNames...) }

	detachOne := m.AttachHosts(one)
	detachTwo := m.AttachHosts(two)
	detachOne() // replaced by two: does nothing
	pool, err := shoal.New(shoal.Config[*FakeConn]{Name: "orders", MaxConns: 1, Dial: FakeDial(), Observer: m})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = pool.Close(context.Background()) })
	check(t, "two, attached before the pool named the metrics", read(),
		hostValues(hostValue{addr: "db-b:5432", open: 2, role: "standby"}))
	detachTwo()
	check(t, "two detached after the pool named the metrics", read(), Values{})
	detachTwo()
}
