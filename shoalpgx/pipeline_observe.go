package shoalpgx

import (
	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/namemask"
	"github.com/shoalpool/shoal/internal/observewrap"
)

// With pipelining the pool is two core pools, but an operator watches one
// database pool: Config.Observer hears the events of both (a pipelined
// statement is one acquire and one release, a shared connection's dial and
// close are the pool's), and its gauges read the two added together
// (sumStats), as Stat does, so that a dashboard made without pipelining
// keeps its meaning: connections open at the server, MaxConns for both.
// Config.PipelineObserver sees the shared connections alone, under the
// pool's name plus "/pipelined", where leases are the statements in flight.

// pipelinedName is the name of the shared connections' pool of a pool named
// name: apart from the pool's in logs and metrics, and sorted beside it.
func pipelinedName(name string) string { return namemask.Suffixed(name, "/pipelined") }

// wholeCoreObserver returns the Observer the whole connections' core pool
// is given: Config.Observer, wrapped with pipelining on so that the gauges
// it attaches count the shared connections too (the shared pool is stored
// in p.sharedCore once made). Its events, holders and wait tracing are
// Config.Observer's.
func (p *Pool) wholeCoreObserver() shoal.Observer {
	o := p.config.Observer
	if o == nil || p.config.Pipeline <= 0 {
		return o
	}
	shared, size, budgeted := &p.sharedCore, int(p.config.MaxConns), p.config.Budget != nil
	return observewrap.Wrap(o, observewrap.Options{Stats: func(s shoal.Stats) shoal.Stats {
		if sp := shared.Load(); sp != nil {
			s = sumStats(s, sp.Stats(), size, budgeted)
		}
		return s
	}})
}

// sharedCoreObserver returns the Observer the shared connections' core pool
// is given: Config.Observer's events (the gauges and holders being the
// whole pool's, see wholeCoreObserver), and Config.PipelineObserver whole.
// A read pool's config is a copy of its pool's, so PipelineObserver is the
// pool's (whose metrics have its name): a read pool's shared connections
// count in its Observer (ReadObserver) only.
func (p *Pool) sharedCoreObserver() shoal.Observer {
	po := p.config.PipelineObserver
	if p.target == targetReads {
		po = nil
	}
	events := observewrap.Events(p.config.Observer)
	switch {
	case events == nil:
		return po
	case po == nil:
		return events
	}
	return shoal.MultiObserver(events, po)
}

// sumStats adds the shared connections' figures s to the whole ones' w,
// as one pool of MaxConns connections: connections, leases, waiters, the
// floors of open connections (MinConns) and every counter added; the
// name, MinIdle and the hosts the whole pool's. Each core has the whole MaxConns as its limit (its half after
// SetMaxConns) within the division of size connections, so the limit is
// their sum, at most size. The division being no budget of the user's,
// without one (budgeted false) Share is the limit and there are no
// members, as for a pool without pipelining. With one, Share is what the
// two may hold together, each core's share being the smaller of the
// user's budget's and the division's, and the members are the user's
// budget's (twoBudgets.Members), so that the pool reports its Budget as
// it would without pipelining.
func sumStats(w, s shoal.Stats, size int, budgeted bool) shoal.Stats {
	limit := min(w.MaxConns+s.MaxConns, size)
	out := w
	out.MaxConns = limit
	out.Share, out.BudgetMembers = limit, 0
	if budgeted {
		out.Share = min(w.Share+s.Share, limit)
		out.BudgetMembers = max(w.BudgetMembers, 1)
	}
	out.Demand = min(w.Demand+s.Demand, limit)
	out.MinConns += s.MinConns
	out.TotalConns += s.TotalConns
	out.IdleConns += s.IdleConns
	out.InUseConns += s.InUseConns
	out.Leases += s.Leases
	out.Waiting += s.Waiting
	out.Dialing += s.Dialing
	out.Closing += s.Closing
	out.Acquires += s.Acquires
	out.WaitedAcquires += s.WaitedAcquires
	out.CanceledAcquires += s.CanceledAcquires
	out.RejectedAcquires += s.RejectedAcquires
	out.FailedAcquires += s.FailedAcquires
	out.WaitTime += s.WaitTime
	out.Dials += s.Dials
	out.DialErrors += s.DialErrors
	out.Closed += s.Closed
	out.Leaked += s.Leaked
	out.BargeMisses += s.BargeMisses
	return out
}
