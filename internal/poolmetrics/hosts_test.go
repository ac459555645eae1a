package poolmetrics

import (
	"fmt"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
)

// TestHostsAttachReplaces: one source at a time; a later Attach replaces
// the earlier one, whose detach then leaves the later one alone.
func TestHostsAttachReplaces(t *testing.T) {
	var h Hosts
	if got, ok := h.Read(); ok || got != nil {
		t.Fatalf("nothing attached: Read() = %v, %v; want nil, false", got, ok)
	}
	one := func() []shoal.HostStat { return []shoal.HostStat{{Addr: "a:1", Open: 1}} }
	two := func() []shoal.HostStat { return []shoal.HostStat{{Addr: "b:2", Open: 2}} }
	addrs := func() string {
		got, ok := h.Read()
		if !ok {
			return "none"
		}
		var out []string
		for _, s := range got {
			out = append(out, s.Addr)
		}
		return fmt.Sprint(out)
	}
	detachOne := h.Attach(one)
	if got := addrs(); got != "[a:1]" {
		t.Errorf("after Attach(one): %s, want [a:1]", got)
	}
	detachTwo := h.Attach(two)
	if got := addrs(); got != "[b:2]" {
		t.Errorf("after Attach(two): %s, want [b:2]", got)
	}
	detachOne()
	if got := addrs(); got != "[b:2]" {
		t.Errorf("the replaced source's detach removed its successor: %s, want [b:2]", got)
	}
	detachTwo()
	detachTwo()
	if got := addrs(); got != "none" {
		t.Errorf("after detaching both: %s, want none", got)
	}
	h.Attach(one)
	h.Attach(nil)
	if got := addrs(); got != "none" {
		t.Errorf("after Attach(nil): %s, want none", got)
	}
}

// TestMergeHosts: one entry per address, the newest check's role, the
// open counts added up, and values fit for labels.
func TestMergeHosts(t *testing.T) {
	older := time.Unix(100, 0)
	newer := time.Unix(200, 0)
	in := []shoal.HostStat{
		{Addr: "db-a:5432", Open: 2, Role: "standby", Lag: time.Second, LastCheck: older},
		{Addr: "db-b:5432", Open: 1},
		{Addr: "", Open: 9, Role: "primary"},
		{Addr: "db-a:5432", Open: 3, Role: "primary", LastCheck: newer, LastError: "refused"},
		{Addr: "db-\xff:5432", Open: 1, Role: "odd\xfe"},
		{Addr: "db-a:5432", Open: 1, Role: "standby", Lag: time.Minute, LastCheck: older},
	}
	got := MergeHosts(in)
	want := []shoal.HostStat{
		{Addr: "db-a:5432", Open: 6, Role: "primary", LastCheck: newer, LastError: "refused"},
		{Addr: "db-b:5432", Open: 1, Role: UnknownRole},
		{Addr: "db-\uFFFD:5432", Open: 1, Role: "odd\uFFFD"},
	}
	if fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("MergeHosts:\n got %v\nwant %v", got, want)
	}
	if in[0].Open != 2 || in[1].Role != "" {
		t.Errorf("MergeHosts changed its input: %v", in[:2])
	}
}
