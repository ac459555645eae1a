package shoal

import (
	"context"
	"time"
)

// Observer is told of every event in a pool's life that metrics care about.
// Set it in Config.Observer; shoalprom and shoalotel provide ready ones.
//
// Methods are called synchronously on the goroutine that caused the event
// (an acquirer, a releaser, a dialling or maintenance goroutine), so they
// must be fast, must not block and must not call back into the pool. The
// pool passes only durations and small values, so calling an Observer
// allocates nothing. Embed BaseObserver to implement only some methods.
type Observer interface {
	// ObserveAcquire: an acquire succeeded after waiting wait (0 when a
	// connection was free at once).
	ObserveAcquire(wait time.Duration)
	// ObserveRelease: a lease ended (Release, Discard or reclaim) after
	// being held for held.
	ObserveRelease(held time.Duration)
	// ObserveDial: a dial finished after took; err is nil on success. A
	// dial that got no permit from the pool's Budget failed too: took is
	// then the wait for the permit.
	ObserveDial(took time.Duration, err error)
	// ObserveClose: the pool closed a connection, for reason.
	ObserveClose(reason Reason)
	// ObserveReject: an acquire was refused by MaxWaiters or load shedding.
	ObserveReject()
	// ObserveTimeout: an acquire's context ended after it waited waited.
	ObserveTimeout(waited time.Duration)
	// ObserveLeak: a lease has been held past Config.LeakThreshold.
	ObserveLeak(report LeakReport)
}

// StatsAttacher is an optional interface of an Observer that reports gauges
// (open, idle, waiting connections) read from the pool's Stats, as metric
// collectors do. New calls Attach with the pool's Stats method, and the
// pool calls the returned detach function once it is closed and drained, so
// that a user sets Config.Observer and nothing else.
type StatsAttacher interface {
	// Attach hands the Observer the pool's Stats method and returns what
	// the pool calls to take it back once it is drained.
	Attach(stats func() Stats) (detach func())
}

// WaitTracer is an optional interface of an Observer that records waits for
// a connection under the caller's trace: shoalotel makes a span of each. The
// pool calls TraceWait once for every acquire that joined the wait queue,
// as the acquire returns, with the caller's context, when it began to wait,
// how long it waited, and how it ended (nil, or the error Acquire returns).
// An acquire served at once never reaches it, so the fast path pays nothing.
// Like the Observer's methods it runs on the acquirer's goroutine and must
// not block.
//
// A WaitTracer whose tracing is an option it may leave off (shoalotel's,
// without WithWaitSpans) also has a method Tracing() bool. The pool asks it
// once, in New, and only when it says true does it trace waits and name
// the code that took each lease (Config.Observer), so that nobody pays for
// a trace they did not ask for.
type WaitTracer interface {
	// TraceWait records one acquire that waited: from start, for wait,
	// under ctx, ending with err.
	TraceWait(ctx context.Context, start time.Time, wait time.Duration, err error)
}

// tracerOf returns o as a WaitTracer when it traces waits: it is one and,
// if it has a Tracing method, that method says so.
func tracerOf(o Observer) (WaitTracer, bool) {
	t, ok := o.(WaitTracer)
	if !ok {
		return nil, false
	}
	if s, ok := o.(interface{ Tracing() bool }); ok && !s.Tracing() {
		return nil, false
	}
	return t, true
}

// BaseObserver implements Observer with methods that do nothing; embed it
// in an observer that cares about only some events.
type BaseObserver struct{}

// ObserveAcquire does nothing.
func (BaseObserver) ObserveAcquire(time.Duration) {}

// ObserveRelease does nothing.
func (BaseObserver) ObserveRelease(time.Duration) {}

// ObserveDial does nothing.
func (BaseObserver) ObserveDial(time.Duration, error) {}

// ObserveClose does nothing.
func (BaseObserver) ObserveClose(Reason) {}

// ObserveReject does nothing.
func (BaseObserver) ObserveReject() {}

// ObserveTimeout does nothing.
func (BaseObserver) ObserveTimeout(time.Duration) {}

// ObserveLeak does nothing.
func (BaseObserver) ObserveLeak(LeakReport) {}

// MultiObserver returns an Observer that tells each of observers in turn,
// for a pool watched by both Prometheus and OpenTelemetry, say. nil entries
// are skipped.
func MultiObserver(observers ...Observer) Observer {
	var list multiObserver
	tracing := false
	for _, o := range observers {
		if o != nil {
			list = append(list, o)
			_, ok := tracerOf(o)
			tracing = tracing || ok
		}
	}
	if tracing {
		return multiTracer{list}
	}
	return list
}

// multiTracer is a multiObserver with a member that traces waits: only
// then does the pool pay for tracing them.
type multiTracer struct{ multiObserver }

// Tracing is true: a multiTracer is made only when a member traces.
func (multiTracer) Tracing() bool { return true }

type multiObserver []Observer

// Attach forwards to every member that is a StatsAttacher.
func (m multiObserver) Attach(stats func() Stats) func() {
	var detaches []func()
	for _, o := range m {
		if a, ok := o.(StatsAttacher); ok {
			detaches = append(detaches, a.Attach(stats))
		}
	}
	return func() {
		for _, d := range detaches {
			if d != nil {
				d()
			}
		}
	}
}

func (m multiObserver) ObserveAcquire(w time.Duration) {
	for _, o := range m {
		o.ObserveAcquire(w)
	}
}
func (m multiObserver) ObserveRelease(h time.Duration) {
	for _, o := range m {
		o.ObserveRelease(h)
	}
}
func (m multiObserver) ObserveDial(t time.Duration, err error) {
	for _, o := range m {
		o.ObserveDial(t, err)
	}
}
func (m multiObserver) ObserveClose(r Reason) {
	for _, o := range m {
		o.ObserveClose(r)
	}
}
func (m multiObserver) ObserveReject() {
	for _, o := range m {
		o.ObserveReject()
	}
}
func (m multiObserver) ObserveTimeout(w time.Duration) {
	for _, o := range m {
		o.ObserveTimeout(w)
	}
}

// TraceWait forwards to every member that is a WaitTracer.
func (m multiTracer) TraceWait(ctx context.Context, start time.Time, wait time.Duration, err error) {
	for _, o := range m.multiObserver {
		if t, ok := tracerOf(o); ok {
			t.TraceWait(ctx, start, wait, err)
		}
	}
}

func (m multiObserver) ObserveLeak(r LeakReport) {
	for _, o := range m {
		o.ObserveLeak(r)
	}
}
