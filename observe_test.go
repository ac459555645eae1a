package shoal

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"
	"testing/synctest"
	"time"
)

// countingObserver counts events without allocating.
type countingObserver struct {
	acquires, releases, dials, dialErrs, closes, rejects, timeouts, leaks atomic.Int64
	waited                                                                atomic.Int64
	mu                                                                    sync.Mutex
	reports                                                               []LeakReport
}

func (o *countingObserver) ObserveAcquire(w time.Duration) { o.acquires.Add(1); o.waited.Add(int64(w)) }
func (o *countingObserver) ObserveRelease(time.Duration)   { o.releases.Add(1) }
func (o *countingObserver) ObserveDial(_ time.Duration, err error) {
	o.dials.Add(1)
	if err != nil {
		o.dialErrs.Add(1)
	}
}
func (o *countingObserver) ObserveClose(Reason)          { o.closes.Add(1) }
func (o *countingObserver) ObserveReject()               { o.rejects.Add(1) }
func (o *countingObserver) ObserveTimeout(time.Duration) { o.timeouts.Add(1) }
func (o *countingObserver) ObserveLeak(r LeakReport) {
	o.leaks.Add(1)
	o.mu.Lock()
	o.reports = append(o.reports, r)
	o.mu.Unlock()
}

func TestObserverSeesEveryEvent(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		obs := &countingObserver{}
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, MaxWaiters: 1, Observer: MultiObserver(obs, nil, BaseObserver{})})
		l := mustAcquire(t, p) // dial + acquire
		got := acquireAsync(context.Background(), p)
		wantWaiters(t, p, 1)
		if _, err := p.Acquire(context.Background()); !errors.Is(err, ErrExhausted) { // reject
			t.Fatal(err)
		}
		const kept = 5 * time.Millisecond
		time.Sleep(kept)
		l.Release() // release, hand-off to the waiter
		if l = <-got; l.rec == nil {
			t.Fatal("the waiter failed")
		}
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Millisecond)
		defer cancel()
		if _, err := p.Acquire(ctx); !errors.Is(err, context.DeadlineExceeded) { // timeout
			t.Fatal(err)
		}
		l.Discard() // release + close
		synctest.Wait()
		checks := map[string][2]int64{
			"acquires": {obs.acquires.Load(), 2}, "releases": {obs.releases.Load(), 2},
			"dials": {obs.dials.Load(), 1}, "closes": {obs.closes.Load(), 1},
			"rejects": {obs.rejects.Load(), 1}, "timeouts": {obs.timeouts.Load(), 1},
		}
		for name, c := range checks {
			if c[0] != c[1] {
				t.Errorf("%s = %d, want %d", name, c[0], c[1])
			}
		}
		// The first acquire waited for its dial, which takes no time on the
		// fake clock; the second for the release.
		if w := time.Duration(obs.waited.Load()); w != kept {
			t.Errorf("waited %v in all, want the %v the waiter was kept waiting", w, kept)
		}
	})
}

// The hot path allocates nothing, with or without an observer or tracing.
func TestAcquireReleaseAllocatesNothing(t *testing.T) {
	if raceEnabled {
		t.Skip("the race detector allocates")
	}
	for _, cfg := range []Config[*fakeConn]{
		{MaxConns: 2},
		{MaxConns: 2, Observer: &countingObserver{}},
		{MaxConns: 2, Observer: &recordingTracer{}}, // tracing: the taker's frame is kept
		{MaxConns: 2, MaxStreams: 4},
		{MaxConns: 2, MaxLifetime: time.Hour, HealthCheck: func(context.Context, *fakeConn) error { return nil }},
	} {
		p, _ := newTestPool(t, cfg)
		ctx := context.Background()
		mustAcquire(t, p).Release()
		allocs := testing.AllocsPerRun(1000, func() {
			l, err := p.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			l.Release()
		})
		if allocs != 0 {
			t.Errorf("config %+v: %v allocations per acquire+release", cfg, allocs)
		}
	}
}

func TestLeakReclaim(t *testing.T) {
	synctest.Test(t, func(t *testing.T) {
		const threshold = 10 * time.Millisecond
		p, _ := newTestPool(t, Config[*fakeConn]{MaxConns: 1, LeakThreshold: threshold, LeakReclaim: true})
		l := mustAcquire(t, p)
		c := l.Value()
		time.Sleep(2 * threshold) // past LeakThreshold and a maintenance tick
		synctest.Wait()
		if !errors.Is(l.Err(), ErrLeaseReclaimed) || !c.closed.Load() {
			t.Fatalf("Err() = %v, closed = %v", l.Err(), c.closed.Load())
		}
		l.Release() // a no-op now
		l2 := mustAcquire(t, p)
		if l2.Value() == c {
			t.Fatal("reclaimed connection handed out again")
		}
		l2.Release()
	})
}

// attachingObserver records the Stats function New hands it and whether
// the pool detached it.
type attachingObserver struct {
	BaseObserver
	stats    func() Stats
	detached atomic.Bool
}

func (o *attachingObserver) Attach(stats func() Stats) func() {
	o.stats = stats
	return func() { o.detached.Store(true) }
}

func TestObserverAttachedAndDetached(t *testing.T) {
	direct, viaMulti := &attachingObserver{}, &attachingObserver{}
	for _, tc := range []struct {
		obs  Observer
		seen *attachingObserver
	}{{direct, direct}, {MultiObserver(&countingObserver{}, viaMulti), viaMulti}} {
		d := &fakeDialer{}
		p, err := New(Config[*fakeConn]{Dial: d.dial, MaxConns: 3, MinIdle: 1, Observer: tc.obs})
		if err != nil {
			t.Fatal(err)
		}
		if tc.seen.stats == nil {
			t.Fatal("New did not attach the observer")
		}
		if s := tc.seen.stats(); s.MaxConns != 3 || s.MinIdle != 1 {
			t.Fatalf("attached Stats: %+v", s)
		}
		if err := p.Close(context.Background()); err != nil {
			t.Fatal(err)
		}
		if !tc.seen.detached.Load() {
			t.Fatal("Close did not detach the observer")
		}
	}
}
