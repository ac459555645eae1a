package shoalpgx

import (
	"context"
	"reflect"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/shoalpool/shoal"
	"github.com/shoalpool/shoal/internal/pgtest"
)

// attachedObserver counts events like pgxObserver and keeps the Stats
// function its pool attaches, as a metrics collector does.
type attachedObserver struct {
	pgxObserver
	mu       sync.Mutex
	stats    func() shoal.Stats
	detached atomic.Int64
}

func (o *attachedObserver) Attach(stats func() shoal.Stats) func() {
	o.mu.Lock()
	o.stats = stats
	o.mu.Unlock()
	return func() { o.detached.Add(1) }
}

func (o *attachedObserver) read(t *testing.T) shoal.Stats {
	t.Helper()
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.stats == nil {
		t.Fatal("the pool attached no Stats")
	}
	return o.stats()
}

// waitFor polls cond until it holds, failing after 10 seconds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("gave up waiting for %s", what)
		}
		time.Sleep(5 * time.Millisecond)
	}
}

func TestPipelineObserverAndStat(t *testing.T) {
	obs, pobs := &attachedObserver{}, &attachedObserver{}
	t.Cleanup(func() {
		// After the pool's Close (cleanups run last first).
		if obs.detached.Load() != 1 || pobs.detached.Load() != 1 {
			t.Errorf("detached %d and %d times, want once each", obs.detached.Load(), pobs.detached.Load())
		}
	})
	p := newPipelinedPool(t, 4, 4, func(c *Config) {
		c.Observer = obs
		c.PipelineObserver = pobs
	})
	ctx := pgtest.Ctx(t)
	name := p.Config().Name

	// The shared pool keeps two connections open; the whole one has none
	// until asked.
	waitFor(t, "two shared connections", func() bool {
		s := p.Stat().Pipelined()
		return s.TotalConns == 2 && s.Dialing == 0
	})
	if s := p.Stat(); s.TotalConns() != 2 || s.IdleConns() != 2 || s.AcquiredConns() != 0 || s.MaxConns() != 4 || s.NewConnsCount() != 2 {
		t.Fatalf("Stat with two idle shared connections: total %d idle %d acquired %d max %d new %d",
			s.TotalConns(), s.IdleConns(), s.AcquiredConns(), s.MaxConns(), s.NewConnsCount())
	}
	if got := pobs.read(t).Name; got != name+"/pipelined" {
		t.Fatalf("PipelineObserver attached to %q, want %q", got, name+"/pipelined")
	}
	if pobs.dials.Load() != 2 || obs.dials.Load() != 2 {
		t.Fatalf("dials seen: Observer %d, PipelineObserver %d; want the two shared ones by both", obs.dials.Load(), pobs.dials.Load())
	}

	table := pgtest.CounterTable(t, p.Exec, "pipeobs")

	// A whole connection holds the row; three pipelined updates wait on it,
	// in flight on the shared connections.
	holder, err := p.Acquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	// On a failure too: the pool's Close waits for it, and the table's
	// drop for its lock. Released twice is released once.
	t.Cleanup(holder.Release)
	tx, err := holder.Begin(ctx)
	if err != nil {
		t.Fatal(err)
	}
	const inFlight = 3
	errs := pgtest.BlockedUpdates(t, tx.Exec, p.Exec, table, inFlight)
	waitFor(t, "three statements in flight", func() bool { return p.Stat().Pipelined().Leases == inFlight })

	// On the two shared connections open, or on a third: an update that
	// finds both held up by the lock's wait goes to one the pool opens.
	ps := p.Stat().Pipelined()
	if ps.Name != name+"/pipelined" || ps.InUseConns < 1 || ps.InUseConns > 3 {
		t.Fatalf("Pipelined: %+v", ps)
	}
	s := p.Stat()
	whole := p.core.Stats()
	if s.AcquiredConns() != int32(1+ps.InUseConns) || s.Shoal().Leases != 1+inFlight || s.Shoal().Name != name {
		t.Fatalf("Stat while the whole connection and %d shared ones are busy: acquired %d leases %d name %q",
			ps.InUseConns, s.AcquiredConns(), s.Shoal().Leases, s.Shoal().Name)
	}
	if s.AcquireCount() != whole.Acquires+ps.Acquires || ps.Acquires < inFlight+2 {
		t.Fatalf("AcquireCount %d, whole %d + shared %d", s.AcquireCount(), whole.Acquires, ps.Acquires)
	}
	// The Observer's gauges read the two kinds together, as Stat does; the
	// PipelineObserver's the shared connections alone.
	if ws := obs.read(t); ws.Name != name || ws.Leases != 1+inFlight || ws.InUseConns != 1+ps.InUseConns || ws.MaxConns != 4 {
		t.Fatalf("Observer's Stats: %+v", ws)
	}
	if ss := pobs.read(t); ss.Leases != inFlight || ss.InUseConns != ps.InUseConns {
		t.Fatalf("PipelineObserver's Stats: %+v", ss)
	}
	if err := tx.Commit(ctx); err != nil {
		t.Fatal(err)
	}
	holder.Release()
	for range inFlight {
		if err := <-errs; err != nil {
			t.Fatal(err)
		}
	}
	// Every pipelined statement was an acquire and a release for both
	// observers; the Observer heard the whole connections' too.
	final := p.Stat()
	if pa, a := pobs.acquires.Load(), obs.acquires.Load(); pa != final.Pipelined().Acquires || a != final.AcquireCount() || pa < inFlight+2 {
		t.Fatalf("acquires seen: Observer %d of %d, PipelineObserver %d of %d", a, final.AcquireCount(), pa, final.Pipelined().Acquires)
	}
	if obs.releases.Load() != obs.acquires.Load() || pobs.releases.Load() != pobs.acquires.Load() {
		t.Fatalf("releases: Observer %d of %d, PipelineObserver %d of %d",
			obs.releases.Load(), obs.acquires.Load(), pobs.releases.Load(), pobs.acquires.Load())
	}
}

// waitTracingObserver is an Observer that traces waits, as shoalotel's
// does with WithWaitSpans.
type waitTracingObserver struct{ attachedObserver }

func (*waitTracingObserver) TraceWait(context.Context, time.Time, time.Duration, error) {}

// quietWaitTracer is a WaitTracer whose Tracing method says it traces
// nothing now, as shoalotel's does without WithWaitSpans.
type quietWaitTracer struct{ waitTracingObserver }

func (*quietWaitTracer) Tracing() bool { return false }

// Both core pools of a pipelined pool trace waits when the Observer does,
// and only then: tracing costs the core only when it is asked for, and a
// tracer whose Tracing says no is not asked.
func TestPipelineObserverKeepsWaitTracing(t *testing.T) {
	for _, o := range []shoal.Observer{&attachedObserver{}, &waitTracingObserver{}, &quietWaitTracer{}} {
		_, tracing := o.(shoal.WaitTracer)
		if q, ok := o.(interface{ Tracing() bool }); ok {
			tracing = q.Tracing()
		}
		p := &Pool{config: &Config{MaxConns: 4, Pipeline: 4, Observer: o}}
		for what, got := range map[string]shoal.Observer{"whole": p.wholeCoreObserver(), "shared": p.sharedCoreObserver()} {
			if _, ok := got.(shoal.WaitTracer); ok != tracing {
				t.Errorf("%T: the %s connections' Observer traces waits: %v, want %v", o, what, ok, tracing)
			}
		}
		if _, ok := p.sharedCoreObserver().(shoal.StatsAttacher); ok {
			t.Errorf("%T: the shared connections' Observer attaches their Stats on their own", o)
		}
	}
}

// After SetMaxConns(n) the cores hold n-n/2 and n/2: the pool's limit
// reads n, and never more than the MaxConns the two divide.
func TestPipelineSumStatsLimit(t *testing.T) {
	for _, c := range []struct{ whole, shared, size, want int }{
		{8, 8, 8, 8}, // as made: each may take all of MaxConns
		{3, 3, 8, 6}, // after SetMaxConns(6)
		{2, 1, 8, 3}, // after SetMaxConns(3)
	} {
		s := sumStats(shoal.Stats{Name: "p", MaxConns: c.whole, Share: c.whole, TotalConns: 1, Acquires: 2},
			shoal.Stats{Name: "p/pipelined", MaxConns: c.shared, Share: c.shared, BudgetMembers: 2, TotalConns: 2, Acquires: 5}, c.size, false)
		if s.MaxConns != c.want || s.Share != c.want || s.BudgetMembers != 0 || s.Name != "p" || s.TotalConns != 3 || s.Acquires != 7 {
			t.Errorf("%d+%d of %d: %+v, want MaxConns and Share %d", c.whole, c.shared, c.size, s, c.want)
		}
	}
}

// Stat's MaxConns is the pool's, as pgxpool reports it, with pipelining
// too: as made, and after SetMaxConns.
func TestPipelineStatMaxConns(t *testing.T) {
	p := newPipelinedPool(t, 6, 4, nil)
	if got := p.Stat().MaxConns(); got != 6 {
		t.Fatalf("MaxConns %d, want 6", got)
	}
	if err := p.SetMaxConns(3); err != nil {
		t.Fatal(err)
	}
	if got := p.Stat().MaxConns(); got != 3 {
		t.Fatalf("MaxConns after SetMaxConns(3): %d", got)
	}
	// Each kind its half, the odd one to the whole connections.
	if err := p.SetMaxConns(5); err != nil {
		t.Fatal(err)
	}
	if whole, shared := p.core.Stats().MaxConns, p.pipe.core.Stats().MaxConns; whole != 3 || shared != 2 {
		t.Fatalf("after SetMaxConns(5): %d whole and %d shared, want 3 and 2", whole, shared)
	}
}

// A read pool's config is its pool's copy: the pool's PipelineObserver,
// whose metrics have the pool's name, never sees the read pool's shared
// connections.
func TestPipelineObserverIsNotTheReadPools(t *testing.T) {
	po := &attachedObserver{}
	p := &Pool{config: &Config{MaxConns: 4, Pipeline: 4, PipelineObserver: po}, target: targetReads}
	if got := p.sharedCoreObserver(); got != nil {
		t.Fatalf("the read pool's shared connections are observed by %T", got)
	}
	p.target = targetAny
	if got := p.sharedCoreObserver(); got != po {
		t.Fatalf("the pool's shared connections are observed by %T, want the PipelineObserver", got)
	}
}

// heldObserver is a pgxObserver that also records the held times of the
// releases it hears.
type heldObserver struct {
	pgxObserver
	heldMu sync.Mutex
	held   []time.Duration
}

func (o *heldObserver) ObserveRelease(held time.Duration) {
	o.pgxObserver.ObserveRelease(held)
	o.heldMu.Lock()
	o.held = append(o.held, held)
	o.heldMu.Unlock()
}

// Each pipelined statement is exactly one acquire and one release, for
// Stat and for the Observer, and the lease is held for the statement's
// time in flight: a statement that sleeps 50ms at the server is released
// after at least that long.
func TestPipelineStatementIsOneLease(t *testing.T) {
	obs := &heldObserver{}
	p := newPipelinedPool(t, 4, 4, func(c *Config) { c.Observer = obs })
	ctx := pgtest.Ctx(t)
	waitFor(t, "two shared connections", func() bool { return p.Stat().Pipelined().TotalConns == 2 })
	s0, a0 := p.Stat(), obs.acquires.Load()
	obs.heldMu.Lock()
	obs.held = nil
	obs.heldMu.Unlock()
	const n = 10
	for i := range n {
		var v int
		if err := p.QueryRow(ctx, "select $1::int", i).Scan(&v); err != nil || v != i {
			t.Fatal(v, err)
		}
	}
	if _, err := p.Exec(ctx, "select pg_sleep(0.05)"); err != nil {
		t.Fatal(err)
	}
	s := p.Stat()
	if d := s.AcquireCount() - s0.AcquireCount(); d != n+1 {
		t.Errorf("AcquireCount rose by %d for %d statements", d, n+1)
	}
	if d := s.Pipelined().Acquires - s0.Pipelined().Acquires; d != n+1 {
		t.Errorf("the shared connections' Acquires rose by %d for %d statements", d, n+1)
	}
	if d := obs.acquires.Load() - a0; d != n+1 {
		t.Errorf("the Observer heard %d acquires for %d statements", d, n+1)
	}
	obs.heldMu.Lock()
	defer obs.heldMu.Unlock()
	if len(obs.held) != n+1 {
		t.Fatalf("the Observer heard %d releases for %d statements", len(obs.held), n+1)
	}
	if last := obs.held[n]; last < 50*time.Millisecond {
		t.Fatalf("the sleeping statement's lease was held %v, want its time in flight, 50ms or more", last)
	}
}

// The pool's Stats with pipelining add every count of the shared
// connections' core to the whole connections': a field sumStats leaves
// out, or one added to shoal.Stats later, fails here until it is added or
// named below as the whole pool's.
func TestSumStatsAddsEveryCount(t *testing.T) {
	notAdded := map[string]bool{
		"Name": true, "MinIdle": true, "Hosts": true, // the whole pool's
		"MaxConns": true, "Share": true, "Demand": true, "BudgetMembers": true, // the division's
	}
	var w, s shoal.Stats
	wv, sv := reflect.ValueOf(&w).Elem(), reflect.ValueOf(&s).Elem()
	for i := range wv.NumField() {
		switch wv.Field(i).Kind() {
		case reflect.Int, reflect.Int64:
			wv.Field(i).SetInt(int64(i + 1))
			sv.Field(i).SetInt(int64(1000 * (i + 1)))
		}
	}
	out := reflect.ValueOf(sumStats(w, s, 1<<20, false))
	for i := range wv.NumField() {
		f := wv.Type().Field(i)
		k := wv.Field(i).Kind()
		if notAdded[f.Name] || k != reflect.Int && k != reflect.Int64 {
			continue
		}
		if got, want := out.Field(i).Int(), int64(1001*(i+1)); got != want {
			t.Errorf("%s: %d, want the sum %d", f.Name, got, want)
		}
	}
	if got := sumStats(w, s, 1<<20, false); got.MaxConns != w.MaxConns+s.MaxConns || got.Share != got.MaxConns || got.BudgetMembers != 0 {
		t.Errorf("limit %d, share %d, members %d; want the two limits' sum, the same, and none", got.MaxConns, got.Share, got.BudgetMembers)
	}
}
