package poolmetrics

import (
	"errors"
	"slices"
	"strings"
	"testing"

	"github.com/shoalpool/shoal"
)

var errDuplicate = errors.New("test: pool name already registered")

func newRegistry(keepCounts bool) *Registry {
	return &Registry{Package: "test", ErrDuplicate: errDuplicate, KeepCounts: keepCounts}
}

// TestRegisterNames: a name must be non-empty, valid UTF-8 and free; the
// errors name the package; a name is free again after Unregister, and
// after a bind that failed.
func TestRegisterNames(t *testing.T) {
	r := newRegistry(false)
	for _, name := range []string{"", "\xff"} {
		if _, err := r.Register(name, nil); err == nil || !strings.HasPrefix(err.Error(), "test: ") {
			t.Errorf("Register(%q): %v, want an error naming the package", name, err)
		}
	}
	a, err := r.Register("a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if a.Name() != "a" {
		t.Errorf("Name() = %q, want a", a.Name())
	}
	if _, err := r.Register("a", nil); !errors.Is(err, errDuplicate) || !strings.Contains(err.Error(), `"a"`) {
		t.Errorf("a name in use: %v, want ErrDuplicate with the name", err)
	}
	a.Unregister(nil)
	refused := errors.New("refused")
	if _, err := r.Register("a", func(*Pool) error { return refused }); err != refused {
		t.Errorf("a bind that fails: %v, want its error as it is", err)
	}
	bound := 0
	if _, err := r.Register("a", func(*Pool) error { bound++; return nil }); err != nil || bound != 1 {
		t.Errorf("after Unregister and a failed bind: %v (bind called %d times), want the name free", err, bound)
	}
}

// TestUnregisterForgetsOnce: forget runs once, as the pool leaves; a
// second Unregister, or one from a pool whose name was registered again
// since, does nothing, and leaves the new registration alone.
func TestUnregisterForgetsOnce(t *testing.T) {
	r := newRegistry(false)
	old, err := r.Register("a", nil)
	if err != nil {
		t.Fatal(err)
	}
	forgot := 0
	forget := func() { forgot++ }
	old.Unregister(forget)
	if forgot != 1 || !old.Removed() {
		t.Fatalf("Unregister: forget called %d times, Removed %v; want 1, true", forgot, old.Removed())
	}
	if _, err := r.Register("a", nil); err != nil {
		t.Fatal(err)
	}
	old.Unregister(forget)
	if forgot != 1 {
		t.Errorf("a stale Unregister called forget again")
	}
	if _, err := r.Register("a", nil); !errors.Is(err, errDuplicate) {
		t.Errorf("a stale Unregister freed its successor's name: %v", err)
	}
}

// TestKeepCounts: with KeepCounts a name registered again continues the
// barge-miss count of its earlier registration, the last count read as it
// unregisters; without, it starts from zero.
func TestKeepCounts(t *testing.T) {
	for _, keep := range []bool{true, false} {
		r := newRegistry(keep)
		first, err := r.Register("a", nil)
		if err != nil {
			t.Fatal(err)
		}
		misses := int64(2)
		first.Attach(func() shoal.Stats { return shoal.Stats{BargeMisses: misses} })
		misses = 3 // after the last read, before Unregister
		first.Unregister(nil)
		again, err := r.Register("a", nil)
		if err != nil {
			t.Fatal(err)
		}
		again.Attach(func() shoal.Stats { return shoal.Stats{BargeMisses: 1} })
		want := int64(1)
		if keep {
			want = 4
		}
		if s, _ := again.Gauges(); s.BargeMisses != want {
			t.Errorf("KeepCounts %v: BargeMisses after registering again = %d, want %d", keep, s.BargeMisses, want)
		}
	}
}

// TestEachSkipsUnregistered: Each visits every registered pool, and skips
// one unregistered after the list was taken.
func TestEachSkipsUnregistered(t *testing.T) {
	r := newRegistry(false)
	pools := map[string]*Pool{}
	for _, name := range []string{"a", "b", "c"} {
		p, err := r.Register(name, nil)
		if err != nil {
			t.Fatal(err)
		}
		pools[name] = p
	}
	var seen []string
	r.Each(func(p *Pool) { seen = append(seen, p.Name()) })
	slices.Sort(seen)
	if !slices.Equal(seen, []string{"a", "b", "c"}) {
		t.Errorf("Each visited %v, want a, b and c", seen)
	}
	seen = nil
	first := true
	r.Each(func(p *Pool) {
		if first { // unregister the two others while the list is walked
			for name, q := range pools {
				if name != p.Name() {
					q.Unregister(nil)
				}
			}
			first = false
		}
		seen = append(seen, p.Name())
	})
	if len(seen) != 1 {
		t.Errorf("Each visited %v after unregistering all but the first, want the first alone", seen)
	}
}

// TestPoolHosts: the hosts function attached to a Pool is read through it,
// merged per address, and replaced by the next one.
func TestPoolHosts(t *testing.T) {
	p, err := newRegistry(false).Register("a", nil)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := p.Hosts(); ok {
		t.Error("Hosts() reports hosts with none attached")
	}
	detach := p.AttachHosts(func() []shoal.HostStat {
		return []shoal.HostStat{{Addr: "db:1", Open: 1}, {Addr: "db:1", Open: 2}}
	})
	if hosts, ok := p.Hosts(); !ok || len(hosts) != 1 || hosts[0].Open != 3 {
		t.Errorf("Hosts() = %v, %v; want one host with 3 open", hosts, ok)
	}
	detach()
	if _, ok := p.Hosts(); ok {
		t.Error("Hosts() reports hosts after detach")
	}
}
