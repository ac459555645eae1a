package observewrap_test

import (
	"context"
	"sync"
	"time"

	"github.com/shoalpool/shoal"
)

// counter is an Observer with no optional interface; it counts the
// acquires and keeps the dials' durations it hears of.
type counter struct {
	shoal.BaseObserver
	mu       sync.Mutex
	acquires int
	dials    []time.Duration
}

func (c *counter) ObserveAcquire(time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.acquires++
}

func (c *counter) ObserveDial(took time.Duration, _ error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.dials = append(c.dials, took)
}

// attacher is a counter that wants the pool's Stats and holders, as
// shoaldebug's Observer does; it counts the detaches.
type attacher struct {
	counter
	stats    func() shoal.Stats
	holders  func() []shoal.Holder
	detached int
}

func (a *attacher) Attach(stats func() shoal.Stats) func() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.stats = stats
	return a.detach
}

func (a *attacher) AttachHolders(holders func() []shoal.Holder) func() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.holders = holders
	return a.detach
}

func (a *attacher) detach() {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.detached++
}

// attached returns what the pool attached.
func (a *attacher) attached() (func() shoal.Stats, func() []shoal.Holder) {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.stats, a.holders
}

// tracer is an attacher that traces waits and has no Tracing method, as
// shoalotel's with wait spans has none it says no with.
type tracer struct {
	attacher
	waits []wait
}

// wait is one TraceWait call.
type wait struct {
	ctx   context.Context
	start time.Time
	wait  time.Duration
	err   error
}

func (t *tracer) TraceWait(ctx context.Context, start time.Time, w time.Duration, err error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.waits = append(t.waits, wait{ctx, start, w, err})
}

// traced returns the waits the tracer heard of.
func (t *tracer) traced() []wait {
	t.mu.Lock()
	defer t.mu.Unlock()
	return append([]wait(nil), t.waits...)
}

// switchedTracer is a tracer whose Tracing method says whether it traces,
// as shoalotel's does with and without WithWaitSpans.
type switchedTracer struct {
	tracer
	on bool
}

func (s *switchedTracer) Tracing() bool { return s.on }

// kinds are Observers of every shape a wrapped one may have, and whether
// each traces waits.
func kinds() []struct {
	name    string
	o       shoal.Observer
	tracing bool
} {
	return []struct {
		name    string
		o       shoal.Observer
		tracing bool
	}{
		{"events only", &counter{}, false},
		{"attacher", &attacher{}, false},
		{"tracer", &tracer{}, true},
		{"tracer, Tracing true", &switchedTracer{on: true}, true},
		{"tracer, Tracing false", &switchedTracer{on: false}, false},
	}
}
