package shoal

import "time"

// Stats is a snapshot of a pool. The gauges (first block) describe the moment
// it was taken; the counters (second block) only grow over the pool's life.
// Taking it walks the pool's connections: cheap, but not for every request.
type Stats struct {
	MaxConns int // the limit now: Config.MaxConns, or what SetMaxConns set last
	// Share is how many connections the Budget lets the pool hold now (the
	// pool opens at most the smaller of Share and MaxConns); without a
	// Budget it equals MaxConns.
	Share int
	// Demand is how many connections the pool would use now: in use plus
	// waited for, at most MaxConns; what a Budget shares out by.
	Demand int
	// BudgetMembers is how many pools share the Budget, this one included,
	// as far as the budget knows (at least 1 with a Budget: a budget that
	// cannot count its members, or has not yet reached them, reads 1); 0
	// without a Budget.
	BudgetMembers int
	MinIdle       int // Config.MinIdle
	MinConns      int // Config.MinConns
	TotalConns    int // open connections (idle + in use), not counting dials in flight
	IdleConns     int // open connections with no lease
	InUseConns    int // open connections with at least one lease
	Leases        int // leases held now; equals InUseConns in exclusive mode
	Waiting       int // callers waiting in Acquire
	Dialing       int // dials in flight
	// Closing is how many connections are being closed now: out of the
	// pool, their Config.Close still running (closes run off the goroutine
	// that let the connection go). They still count against MaxConns and
	// a budget until Close returns.
	Closing int
	// Hosts is what an adapter whose connections go to several servers
	// knows of each (shoalpgx with several hosts in its connection
	// string: see its Pool.Hosts); nil from the core pool itself.
	Hosts []HostStat

	Acquires         int64 // successful acquires
	WaitedAcquires   int64 // successful acquires that had to wait
	CanceledAcquires int64 // acquires whose context ended while they waited
	RejectedAcquires int64 // acquires refused by MaxWaiters or load shedding
	// FailedAcquires counts acquires that failed with a dial's error: the
	// server down, refusing, or unreachable, while no connection could
	// serve them. With CanceledAcquires and RejectedAcquires it counts
	// every acquire that failed, by cause, but those the pool's Close
	// failed.
	FailedAcquires int64
	WaitTime       time.Duration // total time successful acquires spent waiting
	Dials          int64         // dials attempted
	DialErrors     int64         // dials that failed (including OnConnect errors)
	Closed         int64         // connections closed, for any reason
	Leaked         int64         // leases reported as held past LeakThreshold
	// BargeMisses counts connections that a barging release (BargeWindow)
	// left idle through the grace while someone waited: their releasers
	// did not come back. Each suspends barging for 100ms (barge.go). Many
	// of them say that this workload's callers do not come straight back
	// for another connection, and that the pool would do as well with
	// BargeWindow off. shoalprom exports it as
	// shoal_pool_barge_misses_total, shoalotel as shoal.pool.barge_misses.
	BargeMisses int64
}
