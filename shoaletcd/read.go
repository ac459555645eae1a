package shoaletcd

import (
	"context"
	"fmt"
	"sort"

	"github.com/shoalpool/shoal/internal/fairshare"
	clientv3 "go.etcd.io/etcd/client/v3"
)

// View is a budget as etcd holds it at one revision, for `shoal budget`.
type View struct {
	Name     string       // the budget's name, as Read was asked
	Prefix   string       // the key prefix it lives under
	Size     int          // 0 if the budget has no size key (never created)
	FenceKey int32        // the advisory-lock key its members' connections take (Budget.FenceKey)
	Revision int64        // etcd's revision the read saw
	Members  []MemberView // by ID
	Free     int          // slots no key holds
	Orphans  []int        // slot keys whose owner has no member record (leaving, or its record expired first)
}

// MemberView is one member of a budget, as Read shows it.
type MemberView struct {
	ID     string // unique to the member: host, pid and a random suffix
	Host   string // the host name of its process
	PID    int    // its process's id
	Label  string // its Options.Label, a deployment or pod name; optional
	Demand int    // smoothed, as the member publishes it
	Min    int    // the member's minimum
	Share  int    // its max-min share, as every member computes it
	Slots  []int  // slot keys it holds (lent to connections or kept idle)
}

// Read returns the budget name under prefix ("" for DefaultPrefix) in one
// consistent read. It writes nothing and needs no member of its own.
func Read(ctx context.Context, client *clientv3.Client, name, prefix string) (View, error) {
	if prefix == "" {
		prefix = DefaultPrefix
	}
	k := newKeys(prefix, name)
	r, err := client.Get(ctx, k.root, clientv3.WithPrefix())
	if err != nil {
		return View{}, fmt.Errorf("shoaletcd: reading budget %q under %q: %w", name, prefix, err)
	}
	var v view
	v.reset(k, r.Kvs, r.Header.Revision)
	out := View{Name: name, Prefix: prefix, Size: v.size, FenceKey: fenceKey(prefix, name), Revision: r.Header.Revision}
	cs := v.claims("", memberRecord{}, false)
	shares := fairshare.Divide(v.size, cs)
	byID := map[string]int{}
	for i, c := range cs {
		rec := v.members[c.ID]
		out.Members = append(out.Members, MemberView{ID: c.ID, Host: rec.Host, PID: rec.PID, Label: rec.Label,
			Demand: rec.Demand, Min: rec.Min, Share: shares[i]})
	}
	sort.Slice(out.Members, func(i, j int) bool { return out.Members[i].ID < out.Members[j].ID })
	for i, m := range out.Members {
		byID[m.ID] = i
	}
	slots := make([]int, 0, len(v.slots))
	for s := range v.slots {
		slots = append(slots, s)
	}
	sort.Ints(slots)
	for _, s := range slots {
		if i, ok := byID[v.slots[s].id]; ok {
			out.Members[i].Slots = append(out.Members[i].Slots, s)
		} else {
			out.Orphans = append(out.Orphans, s)
		}
	}
	out.Free = max(v.size-len(v.slots), 0)
	return out, nil
}
