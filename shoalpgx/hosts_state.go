package shoalpgx

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal"
)

// hostState is what one pool knows of one host:port of its connection
// string: how many of its connections are open there, what the host was
// found to be the last time the pool looked, and an epoch that retires the
// pool's connections to it at once when the host stops qualifying.
type hostState struct {
	addr string // host:port as the connection string names it

	open atomic.Int64
	// epoch counts the times the host stopped qualifying for the pool; a
	// connection dialled under an older epoch is closed at its next acquire
	// or release (retired).
	epoch atomic.Uint64
	// checking is held by the one acquire that looks at the host's role
	// again (hosts_recheck.go); checkedAt is when the last look was, in Unix
	// nanoseconds, for acquires to read without the lock.
	checking  atomic.Bool
	checkedAt atomic.Int64

	mu      sync.Mutex
	last    role // what the last look found, when checked is set
	lag     time.Duration
	checked time.Time // when role and lag were read
	lastErr string    // why the last dial to the host failed, "" after one that worked
}

// noteRole records what a look at the host found.
func (h *hostState) noteRole(r role, at time.Time) {
	h.mu.Lock()
	h.last, h.lag, h.checked, h.lastErr = r, r.lag, at, ""
	h.mu.Unlock()
	h.checkedAt.Store(at.UnixNano())
}

// noteErr records why a dial to the host failed.
func (h *hostState) noteErr(err error) {
	h.mu.Lock()
	h.lastErr = err.Error()
	h.mu.Unlock()
}

// lastLook is what the last look at the host found (seen false for
// never), and whether its last dial failed.
func (h *hostState) lastLook() (r role, seen, failed bool) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.last, !h.checked.IsZero(), h.lastErr != ""
}

// The states of pooledConn.fallback.
const (
	fallbackNo int32 = iota
	fallbackYes
	fallbackGone // closed or hijacked: counted nowhere again
)

// forget takes pc out of its host's count, and the pool's count of
// fallback connections, when it closes or is hijacked.
func (pc *pooledConn) forget() {
	pc.host.open.Add(-1)
	if pc.fallback.Swap(fallbackGone) == fallbackYes {
		pc.pool.fallbackOpen.Add(-1)
	}
}

// setFallback records whether pc is on a host its pool uses only as a
// fallback (hosts_fallback.go), keeping the pool's count of them. A role
// look that ends after pc closed changes nothing.
func (pc *pooledConn) setFallback(on bool) {
	want := fallbackNo
	if on {
		want = fallbackYes
	}
	for {
		old := pc.fallback.Load()
		if old == want || old == fallbackGone {
			return
		}
		if pc.fallback.CompareAndSwap(old, want) {
			break
		}
	}
	if on {
		pc.pool.fallbackOpen.Add(1)
	} else {
		pc.pool.fallbackOpen.Add(-1)
	}
}

// retire closes the pool's connections to the host: idle ones at their next
// acquire, the others on release.
func (h *hostState) retire() { h.epoch.Add(1) }

// hostSet is one pool's hostStates, one per host:port of its connection
// string, in the string's order; a BeforeConnect hook that dials elsewhere
// adds one.
type hostSet struct {
	mu    sync.Mutex
	hosts []*hostState
}

// newHostSet returns the states of addrs, in order.
func newHostSet(addrs []string) *hostSet {
	s := &hostSet{}
	for _, a := range addrs {
		s.get(a)
	}
	return s
}

// get returns addr's state, adding one for an address not seen before.
func (s *hostSet) get(addr string) *hostState {
	s.mu.Lock()
	defer s.mu.Unlock()
	if i := slices.IndexFunc(s.hosts, func(h *hostState) bool { return h.addr == addr }); i >= 0 {
		return s.hosts[i]
	}
	h := &hostState{addr: addr}
	s.hosts = append(s.hosts, h)
	return h
}

// all returns the states in order.
func (s *hostSet) all() []*hostState {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.hosts)
}

// openElsewhere reports whether the pool has a connection open, or
// connected and on its way in, on a host other than addr.
func (s *hostSet) openElsewhere(addr string) bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.ContainsFunc(s.hosts, func(h *hostState) bool { return h.addr != addr && h.open.Load() > 0 })
}

// HostStat is what a pool knows of one host of its connection string:
// Addr is host:port as the string names it; Open counts the pool's own
// connections there (a Pool's and its read pool's are counted apart); Role is RolePrimary,
// RoleReadOnly, RoleStandby, or RoleUnknown when the pool never asked (a
// single host with target_session_attrs unset or any); Lag is a standby's
// replay lag (see Config.MaxStandbyLag for how it is measured); LastCheck
// is when Role and Lag were read, at a dial or a later look
// (Config.RoleCheckPeriod); LastError is why the last dial to the host
// failed, without the password.
type HostStat = shoal.HostStat

// stat is h's HostStat.
func (h *hostState) stat() HostStat {
	h.mu.Lock()
	defer h.mu.Unlock()
	s := HostStat{Addr: h.addr, Open: int(h.open.Load()), Role: RoleUnknown, Lag: h.lag, LastCheck: h.checked, LastError: h.lastErr}
	if !h.checked.IsZero() {
		s.Role = h.last.name()
	}
	return s
}

// Hosts returns what the pool knows of each host of its connection string,
// in the string's order: its own connections open to it, and its role, lag
// and dial error as this pool last saw them. The read pool's connections
// are not counted here: Reads().Hosts() reports them, so that a read-write
// pool's figures show where its writes go. shoalprom and shoalotel export
// them per host: metrics.AttachHosts(pool.Hosts), and the read pool's on
// metrics of its own name.
func (p *Pool) Hosts() []HostStat {
	var out []HostStat
	for _, h := range p.hosts.all() {
		out = append(out, h.stat())
	}
	return out
}
