package shoaldebug

import (
	"time"

	"github.com/shoalpool/shoal"
)

// Stats is a pool's shoal.Stats as the page shows it and its JSON says it:
// the same fields, under snake_case keys with the unit in the name of
// every duration ("wait_time_ns"), so that a script reads the figures
// without knowing Go's types.
type Stats struct {
	Name          string `json:"name"`
	MaxConns      int    `json:"max_conns"`
	Share         int    `json:"share"`
	Demand        int    `json:"demand"`
	BudgetMembers int    `json:"budget_members"`
	MinIdle       int    `json:"min_idle"`
	MinConns      int    `json:"min_conns"`
	TotalConns    int    `json:"total_conns"`
	IdleConns     int    `json:"idle_conns"`
	InUseConns    int    `json:"in_use_conns"`
	Leases        int    `json:"leases"`
	Waiting       int    `json:"waiting"`
	Dialing       int    `json:"dialing"`
	Closing       int    `json:"closing"`
	Hosts         []Host `json:"hosts,omitempty"`

	Acquires         int64         `json:"acquires"`
	WaitedAcquires   int64         `json:"waited_acquires"`
	CanceledAcquires int64         `json:"canceled_acquires"`
	RejectedAcquires int64         `json:"rejected_acquires"`
	FailedAcquires   int64         `json:"failed_acquires"`
	WaitTime         time.Duration `json:"wait_time_ns"`
	Dials            int64         `json:"dials"`
	DialErrors       int64         `json:"dial_errors"`
	Closed           int64         `json:"closed"`
	Leaked           int64         `json:"leaked"`
	BargeMisses      int64         `json:"barge_misses"`
}

// Host is one server of a pool with several (shoal.HostStat).
type Host struct {
	Addr      string        `json:"addr"`
	Open      int           `json:"open"`
	Role      string        `json:"role"`
	Lag       time.Duration `json:"lag_ns"`
	LastCheck time.Time     `json:"last_check"`
	LastError string        `json:"last_error,omitempty"`
}

// statsOf copies s. A field added to shoal.Stats must be added here too:
// TestStatsMirrorsShoalStats says so.
func statsOf(s shoal.Stats) Stats {
	v := Stats{
		Name: s.Name, MaxConns: s.MaxConns, Share: s.Share, Demand: s.Demand, BudgetMembers: s.BudgetMembers,
		MinIdle: s.MinIdle, MinConns: s.MinConns, TotalConns: s.TotalConns, IdleConns: s.IdleConns,
		InUseConns: s.InUseConns, Leases: s.Leases, Waiting: s.Waiting, Dialing: s.Dialing, Closing: s.Closing,
		Acquires: s.Acquires, WaitedAcquires: s.WaitedAcquires, CanceledAcquires: s.CanceledAcquires,
		RejectedAcquires: s.RejectedAcquires, FailedAcquires: s.FailedAcquires, WaitTime: s.WaitTime,
		Dials: s.Dials, DialErrors: s.DialErrors, Closed: s.Closed, Leaked: s.Leaked, BargeMisses: s.BargeMisses,
	}
	for _, h := range s.Hosts {
		v.Hosts = append(v.Hosts, Host{Addr: h.Addr, Open: h.Open, Role: h.Role, Lag: h.Lag, LastCheck: h.LastCheck, LastError: h.LastError})
	}
	return v
}
