package poolmetrics

import (
	"slices"
	"strings"
	"sync/atomic"

	"github.com/shoalpool/shoal"
)

// UnknownRole is the role reported for a host whose HostStat.Role is
// empty: a label or attribute with an empty value reads as absent, and the
// host would seem to have no role series at all.
const UnknownRole = "unknown"

// Hosts is the per-host source attached to one pool name (AttachHosts in
// shoalprom and shoalotel). Unlike Sources it holds one function at a
// time: a second Attach replaces the first, since per-host numbers of two
// pools cannot be told apart once summed.
type Hosts struct {
	current atomic.Pointer[hostsSource]
}

// hostsSource wraps the attached function so that each Attach has an
// identity its detach can compare against.
type hostsSource struct {
	hosts func() []shoal.HostStat
}

// Attach makes hosts the source, replacing any earlier one, and returns
// the function that removes it again. That function does nothing once
// another Attach replaced hosts, so a stale detach cannot remove its
// successor; calling it twice does nothing either. A nil hosts removes the
// current source.
func (h *Hosts) Attach(hosts func() []shoal.HostStat) (detach func()) {
	if hosts == nil {
		h.current.Store(nil)
		return func() {}
	}
	src := &hostsSource{hosts: hosts}
	h.current.Store(src)
	return func() { h.current.CompareAndSwap(src, nil) }
}

// Read calls the attached function, holding no lock (it may walk a pool),
// and returns its hosts made fit for labels: one entry per address, see
// MergeHosts. ok is false when none is attached.
func (h *Hosts) Read() (hosts []shoal.HostStat, ok bool) {
	src := h.current.Load()
	if src == nil {
		return nil, false
	}
	return MergeHosts(src.hosts()), true
}

// MergeHosts returns in with one entry per Addr, in the order of first
// appearance, without changing in. Two series with the same labels would
// fail a Prometheus scrape, so entries of one address are merged: their
// Open counts add up, and Role, Lag and LastCheck come from the one
// checked last. Addr and Role are made valid UTF-8 (label values must
// be), an empty Role becomes UnknownRole, and an entry with an empty Addr
// is left out: it names no server.
func MergeHosts(in []shoal.HostStat) []shoal.HostStat {
	out := make([]shoal.HostStat, 0, len(in))
	for _, s := range in {
		s.Addr = strings.ToValidUTF8(s.Addr, "\uFFFD")
		if s.Addr == "" {
			continue
		}
		s.Role = strings.ToValidUTF8(s.Role, "\uFFFD")
		if s.Role == "" {
			s.Role = UnknownRole
		}
		i := slices.IndexFunc(out, func(o shoal.HostStat) bool { return o.Addr == s.Addr })
		if i < 0 {
			out = append(out, s)
			continue
		}
		out[i].Open += s.Open
		if s.LastCheck.After(out[i].LastCheck) {
			out[i].Role, out[i].Lag, out[i].LastCheck = s.Role, s.Lag, s.LastCheck
		}
		if out[i].LastError == "" {
			out[i].LastError = s.LastError
		}
	}
	return out
}
