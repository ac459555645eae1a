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
	Name          string `json:"name"`            // the pool's own name, masked
	MaxConns      int    `json:"max_conns"`       // the limit now
	Share         int    `json:"share"`           // connections the Budget lets it hold now
	Demand        int    `json:"demand"`          // connections in use plus waited for
	BudgetMembers int    `json:"budget_members"`  // pools sharing its Budget; 0 without one
	MinIdle       int    `json:"min_idle"`        // the floor kept now: Config.MinIdle, at most MaxConns
	MinConns      int    `json:"min_conns"`       // the floor kept now: Config.MinConns, at most MaxConns
	TotalConns    int    `json:"total_conns"`     // open connections, idle and in use
	IdleConns     int    `json:"idle_conns"`      // open connections with no lease
	InUseConns    int    `json:"in_use_conns"`    // open connections with a lease
	Leases        int    `json:"leases"`          // leases held now
	Waiting       int    `json:"waiting"`         // callers waiting in Acquire
	Dialing       int    `json:"dialing"`         // dials in flight
	Closing       int    `json:"closing"`         // connections whose Close is running
	Hosts         []Host `json:"hosts,omitempty"` // each server of a pool with several

	Acquires         int64         `json:"acquires"`          // successful acquires
	WaitedAcquires   int64         `json:"waited_acquires"`   // of them, those that waited
	CanceledAcquires int64         `json:"canceled_acquires"` // acquires whose context ended first
	RejectedAcquires int64         `json:"rejected_acquires"` // refused by MaxWaiters or shedding
	FailedAcquires   int64         `json:"failed_acquires"`   // failed with a dial's error
	WaitTime         time.Duration `json:"wait_time_ns"`      // total wait of successful acquires
	Dials            int64         `json:"dials"`             // dials attempted
	DialErrors       int64         `json:"dial_errors"`       // dials that failed
	Closed           int64         `json:"closed"`            // connections closed, for any reason
	Leaked           int64         `json:"leaked"`            // leases reported held too long
	BargeMisses      int64         `json:"barge_misses"`      // releases that barging left idle
}

// Host is one server of a pool with several (shoal.HostStat).
type Host struct {
	Addr      string        `json:"addr"`                 // as the configuration names it
	Open      int           `json:"open"`                 // the pool's connections open to it
	Role      string        `json:"role"`                 // what it was found to be at LastCheck
	Lag       time.Duration `json:"lag_ns"`               // how far behind it is, at LastCheck
	LastCheck time.Time     `json:"last_check"`           // when Role and Lag were read
	LastError string        `json:"last_error,omitempty"` // why its last dial failed
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
