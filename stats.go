package shoal

import "time"

// Stats is a snapshot of a pool. The gauges (first block) describe the moment
// it was taken; the counters (second block) only grow over the pool's life.
// Taking it walks the pool's connections: cheap, but not for every request.
type Stats struct {
	// Name is the pool's name: Config.Name, or the one the pool made up.
	// Metrics (shoalprom, shoalotel) and the live page (shoaldebug) use it
	// when they are given none.
	Name     string
	MaxConns int // the limit now: Config.InitialMaxConns or MaxConns, or what SetMaxConns set last
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
	// without a Budget. A budget of your own says through a Members() int
	// method, or a Pools() int one when its members are not pools (the
	// processes of shoaletcd's, each with any number of pools).
	BudgetMembers int
	MinIdle       int // the floor kept now: Config.MinIdle, at most MaxConns
	MinConns      int // the floor kept now: Config.MinConns, at most MaxConns
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
	DialErrors     int64         // dials that failed (a Budget permit refused, Dial or OnConnect)
	// Closed counts connections closed, for any reason: a new connection
	// that Hooks.OnConnect rejected too (ReasonRejected), which counts in
	// DialErrors as well.
	Closed int64
	Leaked int64 // leases reported as held past LeakThreshold
	// BargeMisses counts connections that a barging release (BargeWindow)
	// left idle through the grace while someone waited: their releasers
	// did not come back. Each suspends barging for a while (barge.go). Many
	// of them say that this workload's callers do not come straight back
	// for another connection, and that the pool would do as well with
	// BargeWindow off. shoalprom exports it as
	// shoal_pool_barge_misses_total, shoalotel as shoal.pool.barge_misses.
	BargeMisses int64

	closedFor [len(reasonNames)]int64 // see ClosedFor
}

// ClosedFor counts the connections the pool let go for r (ReasonIdle,
// ReasonLifetime, ...), each as it left the pool, before its hooks and
// Close ran, where Closed counts it once its Close has returned; once
// every close has returned, the counts over all reasons add up to Closed.
// A connection is counted before it leaves TotalConns, in both modes, so
// a snapshot whose TotalConns no longer has it counts why it went: but
// for one taken by Lease.Hijack, no connection the pool opened is missing
// from both (one may, for a moment, be in both).
func (s Stats) ClosedFor(r Reason) int64 {
	if r > 0 && int(r) < len(s.closedFor) {
		return s.closedFor[r]
	}
	return 0
}

// Stats returns a snapshot of the pool's state and counters.
func (p *Pool[T]) Stats() Stats {
	// The floors are reported as kept: a limit below them holds them to it
	// until it rises.
	maxConns := int(p.cap.maxConns.Load())
	s := Stats{
		Name:             p.cfg.Name,
		MaxConns:         maxConns,
		MinIdle:          min(p.cfg.MinIdle, maxConns),
		MinConns:         min(p.cfg.MinConns, maxConns),
		Share:            min(int(p.cap.share.Load()), maxConns),
		Waiting:          int(p.hot.waiters.Load()),
		Dialing:          int(p.cap.dialing.Load()),
		Closing:          int(p.cap.closing.Load()),
		CanceledAcquires: p.counters.canceled.Load(),
		RejectedAcquires: p.counters.rejected.Load(),
		FailedAcquires:   p.counters.dialFailed.Load(),
		Dials:            p.counters.dials.Load(),
		DialErrors:       p.counters.dialErrors.Load(),
		Closed:           p.counters.closed.Load(),
		Leaked:           p.counters.leaked.Load(),
	}
	// Acquires is summed from counters that move apart while connections
	// close (see monotonicAcquires); closedHandouts is read before the
	// engine's walk and unused after it, which keeps a close from being
	// counted twice.
	s.Acquires = p.counters.closedHandouts.Load()
	if p.link.budget != nil {
		s.Share = int(p.cap.share.Load())
		s.BudgetMembers = 1 // this pool, whatever the budget knows yet
		switch m := p.link.budget.(type) {
		case interface{ Pools() int }: // shoaletcd's, whose members are processes
			s.BudgetMembers = max(m.Pools(), 1)
		case interface{ Members() int }: // LocalBudget's, whose members are pools
			s.BudgetMembers = max(m.Members(), 1)
		}
	}
	p.eng.stats(&s)
	// After the engine's walk: a connection it no longer found was
	// counted before it left (closeLeft).
	for i := range s.closedFor {
		s.closedFor[i] = p.counters.leftFor[i].Load()
	}
	s.Demand = p.demandFrom(s.Leases, s.Waiting)
	s.Acquires = p.monotonicAcquires(s.Acquires - p.counters.unused.Load())
	return s
}

// monotonicAcquires keeps Stats.Acquires from falling. The sum Stats makes
// can fall short of the truth for a moment: a closing connection leaves the
// engine before its hand-outs reach closedHandouts, with its hooks and
// Close in between. A counter must never go backwards (shoalprom exports
// it as one), so Stats reports the highest sum any call has seen. The sum
// can also run ahead by a hand-out for an instant (a waiter that passes on
// a lease it was handed counts it unused just after the hand-out); the
// count reported then stays that far ahead until the next acquire.
func (p *Pool[T]) monotonicAcquires(sum int64) int64 {
	for {
		seen := p.counters.acquiresSeen.Load()
		if sum <= seen {
			return seen
		}
		if p.counters.acquiresSeen.CompareAndSwap(seen, sum) {
			return sum
		}
	}
}
