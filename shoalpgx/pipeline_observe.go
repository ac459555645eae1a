package shoalpgx

import (
	"context"
	"sync/atomic"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/namemask"
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

// wholeObserver is Config.Observer as the whole connections' core pool
// holds it with pipelining on: its events pass through, and the gauges it
// attaches read both pools.
type wholeObserver struct {
	shoal.Observer
	shared   *atomic.Pointer[shoal.Pool[*pipeConn]] // set once the shared pool exists
	size     int                                    // the MaxConns the two divide
	budgeted bool                                   // Config.Budget is set (see sumStats)
}

// Attach gives the inner Observer the sum of the core's figures and the
// shared pool's (when there is one yet).
func (w wholeObserver) Attach(stats func() shoal.Stats) func() {
	a, ok := w.Observer.(shoal.StatsAttacher)
	if !ok {
		return func() {}
	}
	shared, size, budgeted := w.shared, w.size, w.budgeted
	return a.Attach(func() shoal.Stats {
		s := stats()
		if sp := shared.Load(); sp != nil {
			s = sumStats(s, sp.Stats(), size, budgeted)
		}
		return s
	})
}

// AttachHolders lists the whole connections' holders: a shared
// connection's streams are no one's to hold for long.
func (w wholeObserver) AttachHolders(holders func() []shoal.Holder) func() {
	if a, ok := w.Observer.(shoal.HoldersAttacher); ok {
		return a.AttachHolders(holders)
	}
	return func() {}
}

// wholeTracer is a wholeObserver whose Observer traces waits: only then
// does the core pay for tracing them.
type wholeTracer struct {
	wholeObserver
	t shoal.WaitTracer
}

// TraceWait passes the wait on.
func (w wholeTracer) TraceWait(ctx context.Context, start time.Time, wait time.Duration, err error) {
	w.t.TraceWait(ctx, start, wait, err)
}

// sharedEvents is Config.Observer as the shared connections' core pool
// holds it: the events only, the gauges being the whole pool's
// (wholeObserver).
type sharedEvents struct{ shoal.Observer }

// sharedTracer is sharedEvents with the waits traced.
type sharedTracer struct {
	sharedEvents
	t shoal.WaitTracer
}

// tracing reports whether t traces waits: true unless it has a Tracing
// method that says no (see shoal.WaitTracer). Only then is it wrapped as a
// tracer, so that the core pays for tracing only what it would pay for
// without the wrapper.
func tracing(t shoal.WaitTracer) bool {
	s, ok := t.(interface{ Tracing() bool })
	return !ok || s.Tracing()
}

// TraceWait passes the wait on.
func (s sharedTracer) TraceWait(ctx context.Context, start time.Time, wait time.Duration, err error) {
	s.t.TraceWait(ctx, start, wait, err)
}

// wholeCoreObserver returns the Observer the whole connections' core pool
// is given: Config.Observer, wrapped with pipelining on so that its gauges
// count the shared connections too (the shared pool is stored in
// p.sharedCore once made).
func (p *Pool) wholeCoreObserver() shoal.Observer {
	o := p.config.Observer
	if o == nil || p.config.Pipeline <= 0 {
		return o
	}
	w := wholeObserver{Observer: o, shared: &p.sharedCore, size: int(p.config.MaxConns), budgeted: p.config.Budget != nil}
	if t, ok := o.(shoal.WaitTracer); ok && tracing(t) {
		return wholeTracer{w, t}
	}
	return w
}

// sharedCoreObserver returns the Observer the shared connections' core pool
// is given: Config.Observer's events, and Config.PipelineObserver whole.
// A read pool's config is a copy of its pool's, so PipelineObserver is the
// pool's (whose metrics have its name): a read pool's shared connections
// count in its Observer (ReadObserver) only.
func (p *Pool) sharedCoreObserver() shoal.Observer {
	po := p.config.PipelineObserver
	if p.target == targetReads {
		po = nil
	}
	var events shoal.Observer
	if o := p.config.Observer; o != nil {
		events = sharedEvents{o}
		if t, ok := o.(shoal.WaitTracer); ok && tracing(t) {
			events = sharedTracer{sharedEvents{o}, t}
		}
	}
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
