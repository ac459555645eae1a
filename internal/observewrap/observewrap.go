// Package observewrap makes the Observer a pool is given in place of
// another, as the adapters do to change an event or the gauges. A pool
// looks in its Observer for more than shoal.Observer: Attach
// (shoal.StatsAttacher), AttachHolders (shoal.HoldersAttacher) and
// TraceWait (shoal.WaitTracer). A wrapper that hid them would cost the
// wrapped Observer its gauges, its holders and its wait spans; one that
// was a WaitTracer whatever it wrapped would make the pool pay for tracing
// nobody asked for. The Observers made here pass each on, and trace
// exactly when the wrapped one does.
package observewrap

import "github.com/shoalpool/shoal"

// Options say how the Observer Wrap returns differs from the one it wraps.
// The zero value changes nothing.
type Options struct {
	// Events hears the pool's events in the wrapped Observer's place: a
	// type that embeds it and changes some of its methods. nil: the
	// wrapped Observer hears them.
	Events shoal.Observer
	// Stats, when set, changes every read of the pool's Stats that the
	// wrapped Observer's Attach makes: to add a second pool's figures in,
	// say. nil: the Stats are read as they are.
	Stats func(shoal.Stats) shoal.Stats
}

// Wrap returns the Observer to give a pool in place of o: the events go to
// opts.Events (o when it is nil), Attach and AttachHolders hand the pool's
// Stats and holders to o's (and return a detach that does nothing when o
// has none), and it is a WaitTracer passing the waits to o when o traces
// them. Wrap(nil, opts) is nil: there is nothing to observe.
func Wrap(o shoal.Observer, opts Options) shoal.Observer {
	if o == nil {
		return nil
	}
	events := opts.Events
	if events == nil {
		events = o
	}
	w := wrapper{Observer: events, o: o, stats: opts.Stats}
	if t, ok := tracerOf(o); ok {
		return wrapperTracer{w, traceTo{t}}
	}
	return w
}

// wrapper is what Wrap returns for an Observer that does not trace waits.
type wrapper struct {
	shoal.Observer                               // hears the events: Options.Events, or o
	o              shoal.Observer                // the wrapped Observer
	stats          func(shoal.Stats) shoal.Stats // Options.Stats
}

// Attach hands the pool's Stats, changed by Options.Stats, to o's Attach.
func (w wrapper) Attach(stats func() shoal.Stats) func() {
	a, ok := w.o.(shoal.StatsAttacher)
	if !ok {
		return func() {}
	}
	if change := w.stats; change != nil {
		read := stats
		stats = func() shoal.Stats { return change(read()) }
	}
	return a.Attach(stats)
}

// AttachHolders hands the pool's holders to o's AttachHolders.
func (w wrapper) AttachHolders(holders func() []shoal.Holder) func() {
	if a, ok := w.o.(shoal.HoldersAttacher); ok {
		return a.AttachHolders(holders)
	}
	return func() {}
}

// wrapperTracer is what Wrap returns for an Observer that traces waits.
type wrapperTracer struct {
	wrapper
	traceTo
}
